package rig

// #include <rig/rig.h>
import "C"

// Device is a device (rig_device_t *); rig keeps its record for the life
// of the process.
type Device struct{ p *C.rig_device_t }

// Open opens the device named name ("MEM:0", "CUDA:0", "MEM:0@rigd").
func Open(name string) (Device, error) {
	n := cString(name)
	defer free(n)
	var d *C.rig_device_t
	err := call(func() C.rig_status_t { return C.rig_open(n, nil, &d) })
	return Device{d}, err
}

// Host is the host device, CPU.
func Host() Device { return Device{C.rig_host()} }

func (d Device) Name() string        { return goString(C.rig_device_name(d.p)) }
func (d Device) Arch() string        { return goString(C.rig_device_arch(d.p)) }
func (d Device) RunsOnHost() bool    { return bool(C.rig_device_runs_on_host(d.p)) }
func (d Device) Alignment() int64    { return int64(C.rig_device_alignment(d.p)) }
func (d Device) Budget() int64       { return int64(C.rig_budget(d.p)) }
func (d Device) Allocated() int64    { return int64(C.rig_allocated(d.p)) }
func (d Device) Equal(o Device) bool { return bool(C.rig_device_equal(d.p, o.p)) }

// Lost is why the device is lost, or "" while it is live.
func (d Device) Lost() string { return goString(C.rig_lost(d.p)) }

// SetBudget sets the device's budget to n bytes.
func (d Device) SetBudget(n int64) error {
	return call(func() C.rig_status_t { return C.rig_set_budget(d.p, C.int64_t(n)) })
}

// Point is a point of a device's timeline: plain data.
type Point struct{ p C.rig_point_t }

func (p Point) Value() uint64 { return uint64(C.rig_point_value(p.p)) }

// Wait returns once the point is reached.
func (p Point) Wait() error {
	return call(func() C.rig_status_t { return C.rig_point_wait(p.p) })
}
