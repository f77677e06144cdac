package rig

// #include <rig/service.h>
import "C"

// Machine is a connection to a rigd (rig_machine_t *), which lives for
// the process.
type Machine struct{ p *C.rig_machine_t }

// Connect connects to the rigd at socket, or, for "", where the default
// lookup finds one (RIG_SERVICE, the user's socket, the system's).
func Connect(socket string) (Machine, error) {
	opts := C.rig_service_options_t{size: C.sizeof_rig_service_options_t}
	if socket != "" {
		opts.socket = cString(socket)
		defer free(opts.socket)
	}
	var m *C.rig_machine_t
	err := call(func() C.rig_status_t { return C.rig_service_connect(&opts, &m) })
	return Machine{m}, err
}

// Name is the machine's name: "rigd", "rigd2", ...
func (m Machine) Name() string { return goString(C.rig_machine_name(m.p)) }

// Lost is why the machine is lost, or "" while it is connected.
func (m Machine) Lost() string { return goString(C.rig_machine_lost(m.p)) }

// Open opens the device rigd serves as name, as NAME@MACHINE.
func (m Machine) Open(name string) (Device, error) {
	n := cString(name)
	defer free(n)
	var d *C.rig_device_t
	err := call(func() C.rig_status_t { return C.rig_machine_open(m.p, n, nil, &d) })
	return Device{d}, err
}

// Share exports b, memory of a rigd proxy, as a token that another process
// connected to the same rigd imports.
func (b *Buffer) Share() (uint64, error) {
	var token C.uint64_t
	err := b.with(func(p *C.rig_buffer_t) C.rig_status_t { return C.rig_service_share(p, &token) })
	return uint64(token), err
}

// Import is a buffer on the proxy d over the bytes exported as token.
func Import(d Device, token uint64) (*Buffer, error) {
	var out *C.rig_buffer_t
	if err := call(func() C.rig_status_t { return C.rig_service_import(d.p, C.uint64_t(token), &out) }); err != nil {
		return nil, err
	}
	return adopt(out), nil
}
