// Package rig is rig from Go: devices, buffers of their memory, copies
// ordered by the memory they touch, host access, files and rigd, the
// per-host service, over librig's C API through cgo.
//
// A failed call answers an *Error carrying the status, the message and,
// where rig sets them, the device, the bytes and the code.  rig keeps them
// per thread, so the binding locks the goroutine to its thread around each
// call that can fail and reads them there: callers never lock threads.
//
// A *Buffer holds one reference to rig's buffer: Close releases it, and a
// finalizer releases it where Close was never called.  Devices and machines
// live for the process (rig.h), so Device and Machine need no Close.  Every
// C call is thread-safe, so every value may be used from many goroutines.
package rig

/*
#cgo pkg-config: rig
#include <rig/disk.h>
#include <rig/rig.h>
#include <rig/service.h>
#include <stdlib.h>
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Version is the loaded library's version, as RIG_VERSION encodes it.
func Version() int { return int(C.rig_version()) }

// HeaderVersion is the version of the headers the binding was built with.
const HeaderVersion = C.RIG_VERSION

// call runs f, a rig call, on one thread and, where it fails, reads that
// thread's error state before anything else runs there.
func call(f func() C.rig_status_t) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if status := f(); status != C.RIG_OK {
		return capture(status)
	}
	return nil
}

// cString is s as a C string the caller frees.
func cString(s string) *C.char { return C.CString(s) }

func free(p *C.char) { C.free(unsafe.Pointer(p)) }

// goString is the C string at p, or "" for NULL.
func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}
