//! rig from Rust: devices, buffers of their memory, copies ordered by the
//! memory they touch, host access, files (the io device DISK) and rigd,
//! the per-host service.  A safe layer over `rig-sys`, the C API.
//!
//! - A failed call answers `Err(rig::Error)`: the status, the message of
//!   `rig_last_error` and, where rig sets them, the device, the bytes and
//!   the code, read on the thread that failed before any other call.
//! - `Buffer` owns one reference (`Clone` adds one, `Drop` releases it).
//!   Devices and machines live for the process (rig.h), so `Device` and
//!   `Machine` are plain `Copy` handles.
//! - Every C call is thread-safe (rig.h), so `Device`, `Buffer`, `Machine`
//!   and `Point` are `Send` and `Sync`.  `Exported` (an exported array,
//!   whose accesses the caller orders) is `Send` only.
//! - Host access lends the bytes as slices (`read`, `write`), of bytes or
//!   of plain numbers (`read_as::<f32>`); a panic in the closure unwinds
//!   to the caller once rig has returned, never through C.
mod buffer;
mod device;
mod error;
mod service;

pub use buffer::{copy, Buffer, Exported, Memory, Plain};
pub use device::{Device, Point};
pub use error::{Error, Result, Status};
pub use service::Machine;

/// Files as buffers of the io device DISK (disk.h).
pub mod disk {
    use crate::{check, c_string, Buffer, Device, Result};
    use std::ptr;

    /// The io device DISK (rig_disk_device).
    pub fn device() -> Result<Device> {
        let mut d = ptr::null_mut();
        check(unsafe { rig_sys::rig_disk_device(&mut d) })?;
        Ok(Device::from_raw(d))
    }

    fn open_in(path: &str, mode: rig_sys::rig_disk_mode_t, offset: i64, length: Option<i64>) -> Result<Buffer> {
        let path = c_string(path)?;
        let mut b = ptr::null_mut();
        check(unsafe { rig_sys::rig_disk_open(path.as_ptr(), mode, offset, length.unwrap_or(-1), &mut b) })?;
        Ok(unsafe { Buffer::from_raw(b) })
    }

    /// A buffer on DISK over `length` bytes of the file at `path` from its
    /// byte `offset` (`None`: to its end), read-only (rig_disk_open).
    pub fn open(path: &str, offset: i64, length: Option<i64>) -> Result<Buffer> {
        open_in(path, rig_sys::RIG_DISK_READ, offset, length)
    }

    /// As `open`, for reading and writing: copies into the buffer write
    /// the file (RIG_DISK_READ_WRITE).
    pub fn open_for_writing(path: &str, offset: i64, length: Option<i64>) -> Result<Buffer> {
        open_in(path, rig_sys::RIG_DISK_READ_WRITE, offset, length)
    }

    /// Makes the bytes copies wrote into `file`, a buffer `open_for_writing`
    /// made, durable: once the work that writes it is done, the file is
    /// flushed to its storage (rig_disk_sync).  A copy into a file is done
    /// once its bytes are written, not yet durable.
    pub fn sync(file: &Buffer) -> Result<()> {
        check(unsafe { rig_sys::rig_disk_sync(file.as_ptr()) })
    }

    /// Writes all of `src` into a new file at `path` (replacing one there)
    /// and makes it durable: a checkpoint of any device's memory.
    pub fn save(src: &Buffer, path: &str) -> Result<()> {
        std::fs::File::create(path)
            .and_then(|f| f.set_len(src.len() as u64))
            .map_err(|e| crate::Error::io(format!("{path}: {e}"), &e))?;
        let file = open_for_writing(path, 0, None)?;
        crate::copy(src, &file)?;
        sync(&file)
    }

    /// Reads the whole file at `path` into a new buffer of `device`'s
    /// memory: a copy from DISK, O_DIRECT where the file allows.
    pub fn load(path: &str, device: Device) -> Result<Buffer> {
        let file = open(path, 0, None)?;
        let buffer = Buffer::create(device, file.len(), crate::Memory::Device)?;
        crate::copy(&file, &buffer)?;
        Ok(buffer)
    }
}

/// The version of the loaded library, as RIG_VERSION encodes it.
pub fn version() -> i32 {
    unsafe { rig_sys::rig_version() }
}

pub(crate) use error::check;

/// A C string of s, or RIG_EINVAL's error where s holds a NUL.
pub(crate) fn c_string(s: &str) -> Result<std::ffi::CString> {
    std::ffi::CString::new(s).map_err(|_| Error::invalid(format!("{s:?} holds a NUL byte")))
}

/// The C string at p, copied, or None for NULL.
pub(crate) fn string_at(p: *const std::os::raw::c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}
