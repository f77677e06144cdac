package rig

// #include <stdint.h>
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// hostAccess is one host access in flight: the caller's function over the
// bytes, and what it panicked with, re-raised once rig has returned (a
// panic must not unwind through C).
type hostAccess struct {
	f        func([]byte)
	panicked interface{}
}

//export rigGoAccess
func rigGoAccess(bytes unsafe.Pointer, n C.int64_t, context unsafe.Pointer) (failed C.int) {
	a := cgo.Handle(uintptr(context)).Value().(*hostAccess)
	defer func() {
		if r := recover(); r != nil {
			a.panicked = r
			failed = 1
		}
	}()
	var s []byte
	if n > 0 {
		s = unsafe.Slice((*byte)(bytes), int(n))
	}
	a.f(s)
	return 0
}
