"""Waits that Ctrl-C interrupts at once.

Python runs its signal handlers between bytecodes of the main thread, never
during a call into C, and a wait of rig's can last forever (a hung device).
So a blocking call made on the main thread runs with rig's interrupt flag
(rig_set_interrupt_flag) and with Python's wakeup file descriptor pointed at
a pipe a watcher thread reads: the C-level handler of any signal Python
handles writes the signal's number there, the watcher raises the flag, and
rig's wait returns RIG_EINTR within 200 ms, having lost and assigned nothing.
The call then runs the pending handlers (PyErr_CheckSignals), so SIGINT's
raises KeyboardInterrupt from the call; where no handler raises, the call
starts again.  Bytes meant for a wakeup fd someone else set are forwarded
to it.  Calls on other threads block as rig's do.
"""

import ctypes
import os
import signal
import threading

from ._lib import lib
from ._types import Status

_flag = ctypes.c_int(0)  # sig_atomic_t; rig keeps its address for good
_lock = threading.Lock()
_state = {"pipe": None, "forward": -1}


def _watch(read_fd):
    while True:
        try:
            data = os.read(read_fd, 512)
        except InterruptedError:
            continue
        if not data:
            return
        _flag.value = 1
        forward = _state["forward"]
        if forward >= 0:
            try:
                os.write(forward, data)
            except OSError:
                pass


def _pipe():
    with _lock:
        if _state["pipe"] is None:
            read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
            os.set_blocking(write_fd, False)
            threading.Thread(target=_watch, args=(read_fd,), name="rig-interrupt", daemon=True).start()
            lib.rig_set_interrupt_flag(ctypes.addressof(_flag))
            _state["pipe"] = write_fd
        return _state["pipe"]


_check_signals = ctypes.PyDLL(None).PyErr_CheckSignals  # a prototype of its own
_check_signals.restype = ctypes.c_int
_check_signals.argtypes = []


def call(function, *args):
    """function(*args), a call of rig's that may wait, interruptible on the
    main thread; answers the call's status."""
    if threading.current_thread() is not threading.main_thread():
        return function(*args)
    write_fd = _pipe()
    while True:
        _flag.value = 0
        try:
            previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        except ValueError:  # a sub-interpreter: no wakeup fd
            return function(*args)
        _state["forward"] = previous
        try:
            status = function(*args)
        finally:
            signal.set_wakeup_fd(previous)
            _state["forward"] = -1
        if status != Status.EINTR or not _flag.value:
            return status
        # Raises the handler's exception (KeyboardInterrupt) through ctypes.
        _check_signals()
