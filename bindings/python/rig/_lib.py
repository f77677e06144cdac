"""Finds librig and declares the prototype of every function of rig.h,
disk.h and service.h that the package calls.

The library is, in this order: the file RIG_LIBRARY names; the build tree
this package sits in (build/<preset>/lib/librig.so.1, release first), when
it runs from a checkout; the system's librig.so.1, through the dynamic
loader's search.
"""

import ctypes
import os
import pathlib

from ._types import (
    Box,
    Dma,
    OpenOptions,
    Part,
    Point,
    ServiceOptions,
    SubmissionOptions,
    TensorInfo,
    access_fn,
    local_drop_fn,
    local_init_fn,
    probe_fn,
    release_fn,
)

SONAME = "librig.so.1"
_PRESETS = ("release", "debug", "asan", "tsan")

c_void_p = ctypes.c_void_p
c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_int64 = ctypes.c_int64
c_uint64 = ctypes.c_uint64
c_bool = ctypes.c_bool
c_size_t = ctypes.c_size_t
c_uint8 = ctypes.c_uint8
P = ctypes.POINTER


def _candidates():
    named = os.environ.get("RIG_LIBRARY")
    if named:
        yield named
        return
    # bindings/python/rig/_lib.py -> the checkout's root, three levels up.
    root = pathlib.Path(__file__).resolve().parents[3]
    for preset in _PRESETS:
        built = root / "build" / preset / "lib" / SONAME
        if built.exists():
            yield str(built)
    yield SONAME


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "rig: librig not found; tried " + "; ".join(tried)
        + ". Set RIG_LIBRARY to the library's path, or install librig1."
    )


# name: (restype, argtypes).  Statuses are c_int.
_PROTOTYPES = {
    "rig_version": (c_int, []),
    "rig_last_error": (c_char_p, []),
    "rig_status_name": (c_char_p, [c_int]),
    "rig_error_device": (c_void_p, []),
    "rig_error_bytes": (c_int64, []),
    "rig_error_code": (c_int, []),
    "rig_set_interrupt_flag": (None, [c_void_p]),
    # Devices
    "rig_host": (c_void_p, []),
    "rig_open": (c_int, [c_char_p, P(OpenOptions), P(c_void_p)]),
    "rig_probe": (c_int, [probe_fn, c_void_p]),
    "rig_memory_device": (c_int, [c_char_p, P(c_void_p)]),
    "rig_close": (c_int, [c_void_p]),
    "rig_device_name": (c_char_p, [c_void_p]),
    "rig_device_arch": (c_char_p, [c_void_p]),
    "rig_device_instruction_set": (c_char_p, [c_void_p]),
    "rig_device_bus": (c_char_p, [c_void_p]),
    "rig_device_runs_on_host": (c_bool, [c_void_p]),
    "rig_device_alignment": (c_int64, [c_void_p]),
    "rig_device_cache_bytes": (c_int64, [c_void_p]),
    "rig_device_capability": (c_void_p, [c_void_p, c_char_p]),
    "rig_device_equal": (c_bool, [c_void_p, c_void_p]),
    "rig_reaches": (c_bool, [c_void_p, c_void_p]),
    "rig_submitted": (c_uint64, [c_void_p]),
    "rig_signaled": (c_int, [c_void_p, P(c_uint64)]),
    "rig_lost": (c_char_p, [c_void_p]),
    # Budgets
    "rig_budget": (c_int64, [c_void_p]),
    "rig_allocated": (c_int64, [c_void_p]),
    "rig_set_budget": (c_int, [c_void_p, c_int64]),
    "rig_free_cache": (c_int, [c_void_p]),
    # Points
    "rig_point_device": (c_void_p, [Point]),
    "rig_point_value": (c_uint64, [Point]),
    "rig_point_make": (Point, [c_void_p, c_uint64]),
    "rig_point_wait": (c_int, [Point]),
    "rig_point_reached": (c_int, [Point, P(c_bool)]),
    # Buffers
    "rig_word": (c_int, []),
    "rig_buffer_create": (c_int, [c_void_p, c_int64, c_int, P(c_void_p)]),
    "rig_buffer_of_bytes": (c_int, [c_void_p, c_int64, P(c_void_p)]),
    "rig_buffer_of_memory": (c_int, [c_void_p, c_int64, release_fn, c_void_p, P(c_void_p)]),
    "rig_buffer_view": (c_int, [c_void_p, c_int64, c_int64, P(c_void_p)]),
    "rig_buffer_borrow": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
    "rig_buffer_ref": (c_void_p, [c_void_p]),
    "rig_buffer_unref": (None, [c_void_p]),
    "rig_buffer_device": (c_void_p, [c_void_p]),
    "rig_buffer_bytes": (c_int64, [c_void_p]),
    "rig_buffer_is_borrowed": (c_bool, [c_void_p]),
    "rig_buffer_spans": (c_bool, [c_void_p]),
    "rig_buffer_access": (c_int, [c_void_p]),
    "rig_buffer_dead": (c_char_p, [c_void_p]),
    "rig_buffer_host": (c_void_p, [c_void_p]),
    "rig_buffer_span": (None, [c_void_p, P(c_int64), P(c_int64)]),
    "rig_buffer_aligned": (c_int, [c_void_p, c_int64, c_int64, P(c_bool)]),
    "rig_buffer_handle": (c_int, [c_void_p, P(c_uint64), P(c_int64)]),
    "rig_buffer_dma": (c_int, [c_void_p, c_char_p, P(Dma)]),
    "rig_buffer_overlaps": (c_bool, [c_void_p, c_void_p]),
    "rig_buffer_share_byte": (c_bool, [c_void_p, c_void_p]),
    "rig_buffer_why": (c_char_p, [c_void_p]),
    # Claims
    "rig_buffer_claim": (c_int, [c_void_p, c_int]),
    "rig_buffer_release": (None, [c_void_p]),
    "rig_claim_begin": (c_int, [c_void_p, P(c_bool)]),
    "rig_claim_end": (c_int, [c_void_p]),
    "rig_claim_consume": (c_int, [c_void_p, c_char_p, P(c_void_p)]),
    "rig_claim_hold": (c_int, [c_void_p]),
    "rig_claim_unhold": (c_int, [c_void_p]),
    "rig_claim_share": (c_int, [c_void_p]),
    "rig_buffer_free": (c_int, [c_void_p, c_char_p, P(c_bool)]),
    "rig_buffer_unborrow": (c_int, [c_void_p, c_char_p, P(c_bool)]),
    # The process and values per device
    "rig_fail": (c_int, [c_char_p]),
    "rig_failure": (c_char_p, []),
    "rig_local_new_key": (c_void_p, [local_init_fn, local_drop_fn, c_void_p]),
    "rig_local_get": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
    # Host access
    "rig_buffer_read": (c_int, [c_void_p, c_int64, access_fn, c_void_p]),
    "rig_buffer_write": (c_int, [c_void_p, c_int64, access_fn, c_void_p]),
    "rig_buffer_wait": (c_int, [c_void_p, c_int]),
    "rig_buffer_reached": (c_int, [c_void_p, c_int, P(c_bool)]),
    "rig_buffer_export": (c_int, [c_void_p, c_int64, P(c_void_p)]),
    "rig_export_bytes": (c_void_p, [c_void_p, P(c_int64)]),
    "rig_export_unref": (None, [c_void_p]),
    # Copying
    "rig_row": (Box, [c_int64, c_int64, c_int64]),
    "rig_buffer_submit_copy": (
        c_int, [c_void_p, c_void_p, P(Box), c_size_t, P(Point), c_size_t, P(Point)]),
    "rig_buffer_copy": (c_int, [c_void_p, c_void_p]),
    "rig_buffer_submit_fill": (c_int, [c_void_p, c_uint8, P(Point), c_size_t, P(Point)]),
    "rig_buffer_fill": (c_int, [c_void_p, c_uint8]),
    "rig_buffer_blit_from_bytes": (c_int, [c_void_p, c_int64, c_int64, c_void_p, c_int64, c_int64]),
    "rig_buffer_blit_to_bytes": (c_int, [c_void_p, c_int64, c_void_p, c_int64, c_int64, c_int64]),
    # Running work
    "rig_image_load": (c_int, [c_void_p, c_void_p, c_int64, P(c_void_p)]),
    "rig_image_ref": (c_void_p, [c_void_p]),
    "rig_image_unref": (None, [c_void_p]),
    "rig_image_device": (c_void_p, [c_void_p]),
    "rig_image_prepare": (c_int, [c_void_p, c_char_p]),
    "rig_image_resolve": (c_int, [c_void_p, c_char_p, P(c_void_p)]),
    "rig_function_name": (c_char_p, [c_void_p]),
    "rig_function_image": (c_void_p, [c_void_p]),
    "rig_function_max_threads": (c_int64, [c_void_p]),
    "rig_submission_make": (c_int, [c_void_p, P(Part), c_size_t, P(SubmissionOptions), P(c_void_p)]),
    "rig_submission_ref": (c_void_p, [c_void_p]),
    "rig_submission_unref": (None, [c_void_p]),
    "rig_submission_slots": (c_size_t, [c_void_p]),
    "rig_submission_block": (c_int64, [c_void_p, c_size_t]),
    "rig_submission_take": (c_int, [c_void_p, P(c_void_p)]),
    "rig_run_submission": (c_void_p, [c_void_p]),
    "rig_run_groups": (c_int, [c_void_p, c_int64, c_int64, c_int64, c_int64]),
    "rig_run_threads": (c_int, [c_void_p, c_int64, c_int64, c_int64, c_int64]),
    "rig_run_shared": (c_int, [c_void_p, c_int64, c_int64]),
    "rig_run_int8": (c_int, [c_void_p, c_int64, c_int64, ctypes.c_int8]),
    "rig_run_int16": (c_int, [c_void_p, c_int64, c_int64, ctypes.c_int16]),
    "rig_run_int32": (c_int, [c_void_p, c_int64, c_int64, ctypes.c_int32]),
    "rig_run_int64": (c_int, [c_void_p, c_int64, c_int64, c_int64]),
    "rig_run_float32": (c_int, [c_void_p, c_int64, c_int64, ctypes.c_float]),
    "rig_run_float64": (c_int, [c_void_p, c_int64, c_int64, ctypes.c_double]),
    "rig_run_bytes": (c_int, [c_void_p, c_int64, c_int64, c_void_p, c_int64]),
    "rig_run_fill": (c_int, [c_void_p, c_int64, c_uint8]),
    "rig_submit": (c_int, [c_void_p, P(c_void_p), c_size_t, P(Point), c_size_t, P(Point)]),
    # disk.h
    "rig_disk_device": (c_int, [P(c_void_p)]),
    "rig_disk_open": (c_int, [c_char_p, c_int, c_int64, c_int64, P(c_void_p)]),
    "rig_disk_sync": (c_int, [c_void_p]),
    # safetensors.h
    "rig_safetensors_open": (c_int, [c_char_p, P(c_void_p)]),
    "rig_safetensors_close": (None, [c_void_p]),
    "rig_safetensors_count": (c_size_t, [c_void_p]),
    "rig_safetensors_tensor": (P(TensorInfo), [c_void_p, c_size_t]),
    "rig_safetensors_data_bytes": (c_int64, [c_void_p]),
    "rig_safetensors_load": (c_int, [c_void_p, c_void_p, c_int, P(c_void_p)]),
    "rig_safetensors_load_arena": (c_int, [c_void_p, c_void_p, c_int, P(c_void_p), P(c_void_p)]),
    # service.h
    "rig_service_connect": (c_int, [P(ServiceOptions), P(c_void_p)]),
    "rig_machine_name": (c_char_p, [c_void_p]),
    "rig_machine_lost": (c_char_p, [c_void_p]),
    "rig_machine_open": (c_int, [c_void_p, c_char_p, P(OpenOptions), P(c_void_p)]),
    "rig_service_share": (c_int, [c_void_p, P(c_uint64)]),
    "rig_service_import": (c_int, [c_void_p, c_uint64, P(c_void_p)]),
    "rig_service_share_fd": (c_int, [c_void_p, P(c_int)]),
    "rig_service_import_fd": (c_int, [c_void_p, c_int, P(c_void_p)]),
}


def _declare(lib):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


lib = _declare(_load())
path = lib._name


def text(raw):
    """A char * the library answered, as str (None for NULL)."""
    return None if raw is None else raw.decode("utf-8", "replace")
