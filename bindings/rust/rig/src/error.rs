//! rig::Error: a failed call's status and the thread's error state.
use crate::{string_at, Device};
use std::fmt;

/// rig_status_t's failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Invalid,
    Lost,
    NoMemory,
    Io,
    Open,
    Interrupted,
    Callback,
    Image,
    /// A status this binding does not know (a later library's).
    Other(i32),
}

impl Status {
    fn of(status: rig_sys::rig_status_t) -> Status {
        match status {
            rig_sys::RIG_EINVAL => Status::Invalid,
            rig_sys::RIG_ELOST => Status::Lost,
            rig_sys::RIG_ENOMEM => Status::NoMemory,
            rig_sys::RIG_EIO => Status::Io,
            rig_sys::RIG_EOPEN => Status::Open,
            rig_sys::RIG_EINTR => Status::Interrupted,
            rig_sys::RIG_ECALLBACK => Status::Callback,
            rig_sys::RIG_EIMAGE => Status::Image,
            other => Status::Other(other),
        }
    }
}

/// A failed rig call.
#[derive(Clone, Debug)]
pub struct Error {
    status: Status,
    name: String,
    message: String,
    device: Option<Device>,
    bytes: i64,
    code: i32,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Captures the calling thread's error state for status; called right
    /// after the failed call, before any other call into rig.
    fn capture(status: rig_sys::rig_status_t) -> Error {
        unsafe {
            let device = rig_sys::rig_error_device();
            Error {
                status: Status::of(status),
                name: string_at(rig_sys::rig_status_name(status)).unwrap_or_default(),
                message: string_at(rig_sys::rig_last_error()).unwrap_or_default(),
                device: (!device.is_null()).then(|| Device::from_raw(device)),
                bytes: rig_sys::rig_error_bytes(),
                code: rig_sys::rig_error_code(),
            }
        }
    }

    /// An invalid argument the binding refuses before calling rig.
    pub(crate) fn invalid(message: String) -> Error {
        Error { status: Status::Invalid, name: "RIG_EINVAL".into(), message, device: None, bytes: 0, code: 0 }
    }

    /// A file the binding could not make, as rig answers an io error:
    /// RIG_EIO with the errno.
    pub(crate) fn io(message: String, e: &std::io::Error) -> Error {
        let code = e.raw_os_error().unwrap_or(0);
        Error { status: Status::Io, name: "RIG_EIO".into(), message, device: None, bytes: 0, code }
    }

    pub fn status(&self) -> Status {
        self.status
    }
    /// rig_last_error's message.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The device of a RIG_ELOST or RIG_ENOMEM.
    pub fn device(&self) -> Option<Device> {
        self.device
    }
    /// The bytes a RIG_ENOMEM could not allocate, else 0.
    pub fn bytes(&self) -> i64 {
        self.bytes
    }
    /// The callback's return (RIG_ECALLBACK) or the errno (RIG_EIO), else 0.
    pub fn code(&self) -> i32 {
        self.code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl std::error::Error for Error {}

/// Ok for RIG_OK, else the thread's error.
pub(crate) fn check(status: rig_sys::rig_status_t) -> Result<()> {
    if status == rig_sys::RIG_OK {
        Ok(())
    } else {
        Err(Error::capture(status))
    }
}
