//! rigd, the per-host service (service.h).
use crate::{c_string, check, string_at, Buffer, Device, Result};
use std::ptr::{self, NonNull};

/// A connection to a rigd (rig_machine_t *), which lives for the process.
#[derive(Clone, Copy, Debug)]
pub struct Machine(NonNull<rig_sys::rig_machine_t>);

unsafe impl Send for Machine {}
unsafe impl Sync for Machine {}

impl Machine {
    /// rig_service_connect to the rigd at socket, or where the default
    /// lookup finds one (RIG_SERVICE, the user's, the system's).
    pub fn connect(socket: Option<&str>) -> Result<Machine> {
        let socket = socket.map(c_string).transpose()?;
        let opts = rig_sys::rig_service_options_t {
            size: std::mem::size_of::<rig_sys::rig_service_options_t>(),
            socket: socket.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
        };
        let mut m = ptr::null_mut();
        check(unsafe { rig_sys::rig_service_connect(&opts, &mut m) })?;
        Ok(Machine(NonNull::new(m).expect("rig answered a NULL machine")))
    }
    /// "rigd", "rigd2", ...
    pub fn name(self) -> String {
        string_at(unsafe { rig_sys::rig_machine_name(self.0.as_ptr()) }).unwrap_or_default()
    }
    /// Why the machine is lost, or None while it is connected.
    pub fn lost(self) -> Option<String> {
        string_at(unsafe { rig_sys::rig_machine_lost(self.0.as_ptr()) })
    }
    /// rig_machine_open: the device rigd serves as name, NAME@MACHINE.
    pub fn open(self, name: &str) -> Result<Device> {
        let name = c_string(name)?;
        let mut d = ptr::null_mut();
        check(unsafe { rig_sys::rig_machine_open(self.0.as_ptr(), name.as_ptr(), ptr::null(), &mut d) })?;
        Ok(Device::from_raw(d))
    }
}

impl Buffer {
    /// rig_service_share: a token another process imports.
    pub fn share(&self) -> Result<u64> {
        let mut token = 0;
        check(unsafe { rig_sys::rig_service_share(self.as_ptr(), &mut token) })?;
        Ok(token)
    }
    /// rig_service_import: a buffer on the proxy d over token's bytes.
    pub fn import(d: Device, token: u64) -> Result<Buffer> {
        let mut b = ptr::null_mut();
        check(unsafe { rig_sys::rig_service_import(d.as_ptr(), token, &mut b) })?;
        Ok(unsafe { Buffer::from_raw(b) })
    }
}
