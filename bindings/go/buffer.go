package rig

/*
#include <rig/rig.h>
#include <stdint.h>

extern int rigGoAccess(void *bytes, int64_t n, void *context);

// Host access with the Go trampoline; h is the access's cgo.Handle.
static rig_status_t rig_go_read(rig_buffer_t *b, int64_t elem_size, uintptr_t h) {
  return rig_buffer_read(b, elem_size, rigGoAccess, (void *)h);
}
static rig_status_t rig_go_write(rig_buffer_t *b, int64_t elem_size, uintptr_t h) {
  return rig_buffer_write(b, elem_size, rigGoAccess, (void *)h);
}
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Memory is a kind of a device's memory (rig_memory_t).
type Memory int

const (
	MemoryDevice Memory = C.RIG_MEMORY_DEVICE
	MemoryPinned Memory = C.RIG_MEMORY_PINNED
	MemoryMapped Memory = C.RIG_MEMORY_MAPPED
)

// Buffer holds one reference to a buffer of a device's memory.  Close
// releases it; a finalizer does where Close was never called.
type Buffer struct {
	mu sync.RWMutex // Close against calls in flight
	p  *C.rig_buffer_t
}

func adopt(p *C.rig_buffer_t) *Buffer {
	b := &Buffer{p: p}
	runtime.SetFinalizer(b, (*Buffer).Close)
	return b
}

// Close releases the reference; later calls answer ErrInvalid.  Safe to
// call twice and from any goroutine.
func (b *Buffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p != nil {
		C.rig_buffer_unref(b.p)
		b.p = nil
		runtime.SetFinalizer(b, nil)
	}
	return nil
}

// with runs f on the live handle, or answers ErrInvalid once closed.
func (b *Buffer) with(f func(p *C.rig_buffer_t) C.rig_status_t) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.p == nil {
		return invalid("the buffer is closed")
	}
	return call(func() C.rig_status_t { return f(b.p) })
}

// NewBuffer makes n bytes of d's memory of kind memory.
func NewBuffer(d Device, n int64, memory Memory) (*Buffer, error) {
	var p *C.rig_buffer_t
	if err := call(func() C.rig_status_t { return C.rig_buffer_create(d.p, C.int64_t(n), C.rig_memory_t(memory), &p) }); err != nil {
		return nil, err
	}
	return adopt(p), nil
}

// Len is the buffer's length in bytes (0 once closed).
func (b *Buffer) Len() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return int64(C.rig_buffer_bytes(b.p))
}

// Device is the device the buffer is on.
func (b *Buffer) Device() Device {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return Device{C.rig_buffer_device(b.p)}
}

// HostAddress is the host address of the first byte, or 0 where the host
// does not address the memory.
func (b *Buffer) HostAddress() uintptr {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return uintptr(C.rig_buffer_host(b.p))
}

// View is length bytes of b from byte first.
func (b *Buffer) View(first, length int64) (*Buffer, error) {
	var p *C.rig_buffer_t
	if err := b.with(func(q *C.rig_buffer_t) C.rig_status_t {
		return C.rig_buffer_view(q, C.int64_t(first), C.int64_t(length), &p)
	}); err != nil {
		return nil, err
	}
	return adopt(p), nil
}

func (b *Buffer) access(write bool, elemSize int64, f func([]byte)) error {
	a := &hostAccess{f: f}
	h := cgo.NewHandle(a)
	defer h.Delete()
	err := b.with(func(p *C.rig_buffer_t) C.rig_status_t {
		if write {
			return C.rig_go_write(p, C.int64_t(elemSize), C.uintptr_t(h))
		}
		return C.rig_go_read(p, C.int64_t(elemSize), C.uintptr_t(h))
	})
	if a.panicked != nil {
		panic(a.panicked)
	}
	return err
}

// Read calls f on the bytes in place once every device's last write of
// them is done.  f must not write nor keep them.
func (b *Buffer) Read(f func([]byte)) error { return b.access(false, 1, f) }

// Write calls f on the bytes in place once every use of them is done; work
// submitted afterwards sees its writes.
func (b *Buffer) Write(f func([]byte)) error { return b.access(true, 1, f) }

// ReadFloat32s and WriteFloat32s lend the bytes as float32s (RIG_EINVAL
// unless they are whole, aligned float32s).
func (b *Buffer) ReadFloat32s(f func([]float32)) error {
	return b.access(false, 4, func(s []byte) { f(float32s(s)) })
}
func (b *Buffer) WriteFloat32s(f func([]float32)) error {
	return b.access(true, 4, func(s []byte) { f(float32s(s)) })
}

func float32s(s []byte) []float32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[0])), len(s)/4)
}

// CopyFrom copies all of s into b from byte first and returns once the
// bytes are there: any memory, a device's own included.
func (b *Buffer) CopyFrom(s []byte, first int64) error {
	n := C.int64_t(len(s))
	return b.with(func(p *C.rig_buffer_t) C.rig_status_t {
		return C.rig_buffer_blit_from_bytes(bytesOf(s), n, 0, p, C.int64_t(first), n)
	})
}

// CopyTo copies len(s) bytes of b from byte first into s.
func (b *Buffer) CopyTo(s []byte, first int64) error {
	n := C.int64_t(len(s))
	return b.with(func(p *C.rig_buffer_t) C.rig_status_t {
		return C.rig_buffer_blit_to_bytes(p, C.int64_t(first), bytesOf(s), n, 0, n)
	})
}

func bytesOf(s []byte) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Fill sets every byte to c.
func (b *Buffer) Fill(c byte) error {
	return b.with(func(p *C.rig_buffer_t) C.rig_status_t { return C.rig_buffer_fill(p, C.uint8_t(c)) })
}

// withBoth runs f on src's and dst's live handles.
func withBoth(src, dst *Buffer, f func(s, d *C.rig_buffer_t) C.rig_status_t) error {
	dst.mu.RLock()
	defer dst.mu.RUnlock()
	if dst.p == nil {
		return invalid("the destination is closed")
	}
	return src.with(func(p *C.rig_buffer_t) C.rig_status_t { return f(p, dst.p) })
}

// Copy copies all of src into dst (of equal lengths) and waits for it.
func Copy(src, dst *Buffer) error {
	return withBoth(src, dst, func(s, d *C.rig_buffer_t) C.rig_status_t { return C.rig_buffer_copy(s, d) })
}

// SubmitCopy submits a copy of all of src into dst and answers its point.
func SubmitCopy(src, dst *Buffer) (Point, error) {
	var out C.rig_point_t
	err := withBoth(src, dst, func(s, d *C.rig_buffer_t) C.rig_status_t {
		row := C.rig_row(0, 0, C.rig_buffer_bytes(s))
		return C.rig_buffer_submit_copy(s, d, &row, 1, nil, 0, &out)
	})
	return Point{out}, err
}
