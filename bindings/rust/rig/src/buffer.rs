//! Buffers: memory of a device, owned by reference.
use crate::{c_string, check, string_at, Device, Error, Point, Result};
use std::any::Any;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

/// The kinds of a device's memory (rig_memory_t).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    Device,
    Pinned,
    Mapped,
}

/// Numbers whose every bit pattern is a value, which host access may lend
/// as slices of them.
///
/// # Safety
/// Implement only for types without padding or invalid bit patterns.
pub unsafe trait Plain: Copy + 'static {}
macro_rules! plain {
    ($($t:ty),*) => {$(unsafe impl Plain for $t {})*};
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// One reference to a buffer (rig_buffer_t *).
#[derive(Debug)]
pub struct Buffer(NonNull<rig_sys::rig_buffer_t>);

// Every call on a buffer is thread-safe (rig.h); host access orders itself
// against other threads' work by the memory's stamps and claims.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Clone for Buffer {
    fn clone(&self) -> Buffer {
        unsafe { Buffer::from_raw(rig_sys::rig_buffer_ref(self.as_ptr())) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { rig_sys::rig_buffer_unref(self.as_ptr()) }
    }
}

/// rig_buffer_read or rig_buffer_write.
type HostAccessCall =
    unsafe extern "C" fn(*mut rig_sys::rig_buffer_t, i64, rig_sys::rig_access_fn, *mut c_void) -> rig_sys::rig_status_t;

/// The context of one host access: the closure, and the panic it raised.
struct Access<'a, T> {
    f: &'a mut dyn FnMut(*mut T, usize),
    panic: Option<Box<dyn Any + Send>>,
}

unsafe extern "C" fn trampoline<T>(bytes: *mut c_void, n: i64, context: *mut c_void) -> c_int {
    let access = &mut *(context as *mut Access<T>);
    let count = n as usize / std::mem::size_of::<T>();
    let pointer = if count == 0 { NonNull::<T>::dangling().as_ptr() } else { bytes as *mut T };
    match panic::catch_unwind(AssertUnwindSafe(|| (access.f)(pointer, count))) {
        Ok(()) => 0,
        Err(payload) => {
            access.panic = Some(payload);
            1
        }
    }
}

impl Buffer {
    /// Takes over a reference the caller holds.
    ///
    /// # Safety
    /// b is a live reference that nothing else will release.
    pub unsafe fn from_raw(b: *mut rig_sys::rig_buffer_t) -> Buffer {
        Buffer(NonNull::new(b).expect("rig answered a NULL buffer"))
    }
    pub fn as_ptr(&self) -> *mut rig_sys::rig_buffer_t {
        self.0.as_ptr()
    }

    /// rig_buffer_create: n bytes of d's memory of kind memory.
    pub fn create(d: Device, n: i64, memory: Memory) -> Result<Buffer> {
        let kind = match memory {
            Memory::Device => rig_sys::RIG_MEMORY_DEVICE,
            Memory::Pinned => rig_sys::RIG_MEMORY_PINNED,
            Memory::Mapped => rig_sys::RIG_MEMORY_MAPPED,
        };
        let mut b = ptr::null_mut();
        check(unsafe { rig_sys::rig_buffer_create(d.as_ptr(), n, kind, &mut b) })?;
        Ok(unsafe { Buffer::from_raw(b) })
    }
    /// rig_buffer_of_bytes: a host buffer holding a copy of bytes.
    pub fn of_bytes(bytes: &[u8]) -> Result<Buffer> {
        let mut b = ptr::null_mut();
        check(unsafe { rig_sys::rig_buffer_of_bytes(bytes.as_ptr().cast(), bytes.len() as i64, &mut b) })?;
        Ok(unsafe { Buffer::from_raw(b) })
    }
    /// rig_buffer_view: length bytes from byte first.
    pub fn view(&self, first: i64, length: i64) -> Result<Buffer> {
        let mut b = ptr::null_mut();
        check(unsafe { rig_sys::rig_buffer_view(self.as_ptr(), first, length, &mut b) })?;
        Ok(unsafe { Buffer::from_raw(b) })
    }

    pub fn device(&self) -> Device {
        Device::from_raw(unsafe { rig_sys::rig_buffer_device(self.as_ptr()) })
    }
    /// The length in bytes.
    pub fn len(&self) -> i64 {
        unsafe { rig_sys::rig_buffer_bytes(self.as_ptr()) }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Why the buffer is dead, or None while it is live.
    pub fn dead(&self) -> Option<String> {
        string_at(unsafe { rig_sys::rig_buffer_dead(self.as_ptr()) })
    }
    /// The host address of the first byte where the host addresses it.
    pub fn host_address(&self) -> Option<NonNull<u8>> {
        NonNull::new(unsafe { rig_sys::rig_buffer_host(self.as_ptr()) }.cast())
    }

    /// rig_buffer_read: f sees the bytes in place, once every device's
    /// last write of them is done.
    pub fn read<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        self.read_as::<u8, R>(f)
    }
    /// rig_buffer_write: f changes the bytes in place, once every use of
    /// them is done; work submitted afterwards sees its writes.
    pub fn write<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Result<R> {
        self.write_as::<u8, R>(f)
    }
    /// read over whole, aligned Ts (RIG_EINVAL otherwise).
    pub fn read_as<T: Plain, R>(&self, f: impl FnOnce(&[T]) -> R) -> Result<R> {
        self.lend(rig_sys::rig_buffer_read, |p, n| f(unsafe { std::slice::from_raw_parts(p, n) }))
    }
    /// write over whole, aligned Ts (RIG_EINVAL otherwise).
    pub fn write_as<T: Plain, R>(&self, f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        self.lend(rig_sys::rig_buffer_write, |p, n| f(unsafe { std::slice::from_raw_parts_mut(p, n) }))
    }

    /// Runs the host access call (rig_buffer_read or rig_buffer_write)
    /// with f over the Ts, answering what f did; a panic of f resumes here.
    fn lend<T: Plain, R>(&self, call: HostAccessCall, f: impl FnOnce(*mut T, usize) -> R) -> Result<R> {
        let mut f = Some(f);
        let mut result = None;
        let mut lent = |p: *mut T, n: usize| {
            let f = f.take().expect("rig calls a host access once");
            result = Some(f(p, n));
        };
        let mut access = Access::<T> { f: &mut lent, panic: None };
        let status = unsafe {
            call(self.as_ptr(), std::mem::size_of::<T>() as i64, Some(trampoline::<T>),
                 &mut access as *mut Access<T> as *mut c_void)
        };
        if let Some(payload) = access.panic {
            panic::resume_unwind(payload);
        }
        check(status)?;
        Ok(result.expect("rig called the host access"))
    }

    /// rig_buffer_blit_from_bytes: all of bytes into the buffer from byte
    /// first, returning once they are there.  Any memory, the device's own
    /// included.
    pub fn blit_from(&self, bytes: &[u8], first: i64) -> Result<()> {
        let n = bytes.len() as i64;
        check(unsafe { rig_sys::rig_buffer_blit_from_bytes(bytes.as_ptr().cast(), n, 0, self.as_ptr(), first, n) })
    }
    /// rig_buffer_blit_to_bytes: bytes.len() bytes from byte first.
    pub fn blit_to(&self, bytes: &mut [u8], first: i64) -> Result<()> {
        let n = bytes.len() as i64;
        check(unsafe { rig_sys::rig_buffer_blit_to_bytes(self.as_ptr(), first, bytes.as_mut_ptr().cast(), n, 0, n) })
    }
    /// rig_buffer_fill.
    pub fn fill(&self, c: u8) -> Result<()> {
        check(unsafe { rig_sys::rig_buffer_fill(self.as_ptr(), c) })
    }
    /// rig_buffer_submit_fill: the point once the bytes are set.
    pub fn submit_fill(&self, c: u8, waits: &[Point]) -> Result<Point> {
        let mut out = rig_sys::rig_point_t::default();
        check(unsafe {
            rig_sys::rig_buffer_submit_fill(self.as_ptr(), c, waits.as_ptr().cast(), waits.len(), &mut out)
        })?;
        Ok(Point(out))
    }
    /// rig_buffer_submit_copy of all of self into dst (equal lengths).
    pub fn submit_copy_to(&self, dst: &Buffer, waits: &[Point]) -> Result<Point> {
        let row = unsafe { rig_sys::rig_row(0, 0, self.len()) };
        let mut out = rig_sys::rig_point_t::default();
        check(unsafe {
            rig_sys::rig_buffer_submit_copy(self.as_ptr(), dst.as_ptr(), &row, 1, waits.as_ptr().cast(),
                                            waits.len(), &mut out)
        })?;
        Ok(Point(out))
    }
    /// rig_buffer_wait for a read-write host access.
    pub fn wait(&self) -> Result<()> {
        check(unsafe { rig_sys::rig_buffer_wait(self.as_ptr(), rig_sys::RIG_ACCESS_READ_WRITE) })
    }

    /// rig_buffer_free: returns the memory early; false where a claim
    /// holds it or the buffer does not span it.
    pub fn free_early(&self, why: &str) -> Result<bool> {
        let why = c_string(why)?;
        let mut freed = false;
        check(unsafe { rig_sys::rig_buffer_free(self.as_ptr(), why.as_ptr(), &mut freed) })?;
        Ok(freed)
    }

    /// rig_buffer_export: the bytes for good, as whole elements of
    /// elem_size bytes; only of host memory.
    pub fn export(&self, elem_size: i64) -> Result<Exported> {
        let mut e = ptr::null_mut();
        check(unsafe { rig_sys::rig_buffer_export(self.as_ptr(), elem_size, &mut e) })?;
        NonNull::new(e).map(Exported).ok_or_else(|| Error::invalid("rig answered no export".into()))
    }
}

/// rig_buffer_copy: all of src into dst (equal lengths), waited for.
pub fn copy(src: &Buffer, dst: &Buffer) -> Result<()> {
    check(unsafe { rig_sys::rig_buffer_copy(src.as_ptr(), dst.as_ptr()) })
}

/// An exported array (rig_export_t *): a buffer's bytes for good, released
/// on drop.  Outside the claims: the caller orders access through it, so
/// it moves between threads but is not shared by them.
#[derive(Debug)]
pub struct Exported(NonNull<rig_sys::rig_export_t>);

unsafe impl Send for Exported {}

impl Exported {
    pub fn as_slice(&self) -> &[u8] {
        let mut n = 0;
        let p = unsafe { rig_sys::rig_export_bytes(self.0.as_ptr(), &mut n) };
        if n == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(p.cast(), n as usize) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let mut n = 0;
        let p = unsafe { rig_sys::rig_export_bytes(self.0.as_ptr(), &mut n) };
        if n == 0 {
            return &mut [];
        }
        unsafe { std::slice::from_raw_parts_mut(p.cast(), n as usize) }
    }
}

impl Drop for Exported {
    fn drop(&mut self) {
        unsafe { rig_sys::rig_export_unref(self.0.as_ptr()) }
    }
}
