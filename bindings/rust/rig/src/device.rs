//! Devices and points.
use crate::{c_string, check, string_at, Result};
use std::ptr::{self, NonNull};

/// A device (rig_device_t *).  rig keeps every device record for the life
/// of the process, so the handle is plain data.
#[derive(Clone, Copy, Debug)]
pub struct Device(NonNull<rig_sys::rig_device_t>);

// Every call on a device is thread-safe (rig.h) and the record never dies.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Device {
    pub(crate) fn from_raw(d: *mut rig_sys::rig_device_t) -> Device {
        Device(NonNull::new(d).expect("rig answered a NULL device"))
    }
    pub fn as_ptr(self) -> *mut rig_sys::rig_device_t {
        self.0.as_ptr()
    }

    /// rig_open: the device named name ("MEM:0", "CUDA:0", "MEM:0@rigd").
    pub fn open(name: &str) -> Result<Device> {
        Device::open_with(name, None)
    }
    /// rig_open with a driver's configuration (such as "latency_us=20").
    pub fn open_with(name: &str, config: Option<&str>) -> Result<Device> {
        let name = c_string(name)?;
        let config = config.map(c_string).transpose()?;
        let opts = rig_sys::rig_open_options_t {
            size: std::mem::size_of::<rig_sys::rig_open_options_t>(),
            config: config.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
        };
        let mut d = ptr::null_mut();
        check(unsafe { rig_sys::rig_open(name.as_ptr(), &opts, &mut d) })?;
        Ok(Device::from_raw(d))
    }
    /// The host (rig_host).
    pub fn host() -> Device {
        Device::from_raw(unsafe { rig_sys::rig_host() })
    }

    pub fn name(self) -> String {
        string_at(unsafe { rig_sys::rig_device_name(self.as_ptr()) }).unwrap_or_default()
    }
    pub fn arch(self) -> String {
        string_at(unsafe { rig_sys::rig_device_arch(self.as_ptr()) }).unwrap_or_default()
    }
    pub fn runs_on_host(self) -> bool {
        unsafe { rig_sys::rig_device_runs_on_host(self.as_ptr()) }
    }
    pub fn alignment(self) -> i64 {
        unsafe { rig_sys::rig_device_alignment(self.as_ptr()) }
    }
    /// Why the device is lost, or None while it is live.
    pub fn lost(self) -> Option<String> {
        string_at(unsafe { rig_sys::rig_lost(self.as_ptr()) })
    }
    pub fn submitted(self) -> u64 {
        unsafe { rig_sys::rig_submitted(self.as_ptr()) }
    }
    pub fn budget(self) -> i64 {
        unsafe { rig_sys::rig_budget(self.as_ptr()) }
    }
    pub fn allocated(self) -> i64 {
        unsafe { rig_sys::rig_allocated(self.as_ptr()) }
    }
    pub fn set_budget(self, n: i64) -> Result<()> {
        check(unsafe { rig_sys::rig_set_budget(self.as_ptr(), n) })
    }
    /// rig_close: ends the device for every opener of its name.
    pub fn close(self) -> Result<()> {
        check(unsafe { rig_sys::rig_close(self.as_ptr()) })
    }
}

impl PartialEq for Device {
    /// rig_device_equal: a reopened name is another device.
    fn eq(&self, other: &Device) -> bool {
        unsafe { rig_sys::rig_device_equal(self.as_ptr(), other.as_ptr()) }
    }
}

/// A point of a device's timeline (rig_point_t): plain data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Point(pub rig_sys::rig_point_t);

impl Point {
    pub fn value(self) -> u64 {
        unsafe { rig_sys::rig_point_value(self.0) }
    }
    /// The device, until a later device takes its slot.
    pub fn device(self) -> Option<Device> {
        let d = unsafe { rig_sys::rig_point_device(self.0) };
        (!d.is_null()).then(|| Device::from_raw(d))
    }
    /// rig_point_wait.
    pub fn wait(self) -> Result<()> {
        check(unsafe { rig_sys::rig_point_wait(self.0) })
    }
    pub fn reached(self) -> Result<bool> {
        let mut out = false;
        check(unsafe { rig_sys::rig_point_reached(self.0, &mut out) })?;
        Ok(out)
    }
}
