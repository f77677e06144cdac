package rig

// #include <rig/rig.h>
import "C"

import "fmt"

// Status is a failed call's rig_status_t.
type Status int

const (
	StatusInvalid     Status = C.RIG_EINVAL
	StatusLost        Status = C.RIG_ELOST
	StatusNoMemory    Status = C.RIG_ENOMEM
	StatusIO          Status = C.RIG_EIO
	StatusOpen        Status = C.RIG_EOPEN
	StatusInterrupted Status = C.RIG_EINTR
	StatusCallback    Status = C.RIG_ECALLBACK
	StatusImage       Status = C.RIG_EIMAGE
)

// String is the status's C name, such as "RIG_EINVAL".
func (s Status) String() string { return goString(C.rig_status_name(C.rig_status_t(s))) }

// Sentinels for errors.Is: errors.Is(err, rig.ErrLost).
var (
	ErrInvalid     = &Error{Status: StatusInvalid}
	ErrLost        = &Error{Status: StatusLost}
	ErrNoMemory    = &Error{Status: StatusNoMemory}
	ErrIO          = &Error{Status: StatusIO}
	ErrOpen        = &Error{Status: StatusOpen}
	ErrInterrupted = &Error{Status: StatusInterrupted}
	ErrCallback    = &Error{Status: StatusCallback}
	ErrImage       = &Error{Status: StatusImage}
)

// Error is a failed rig call.
type Error struct {
	Status  Status
	Message string  // rig_last_error
	Device  *Device // the device of a RIG_ELOST or RIG_ENOMEM
	Bytes   int64   // the bytes a RIG_ENOMEM could not allocate
	Code    int     // the callback's return (RIG_ECALLBACK) or the errno (RIG_EIO)
}

func (e *Error) Error() string { return fmt.Sprintf("%v: %s", e.Status, e.Message) }

// Is matches an error of the same status, so the sentinels match.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// capture reads the calling thread's error state for status.
func capture(status C.rig_status_t) *Error {
	e := &Error{
		Status:  Status(status),
		Message: goString(C.rig_last_error()),
		Bytes:   int64(C.rig_error_bytes()),
		Code:    int(C.rig_error_code()),
	}
	if d := C.rig_error_device(); d != nil {
		e.Device = &Device{d}
	}
	return e
}

func invalid(message string) *Error { return &Error{Status: StatusInvalid, Message: message} }
