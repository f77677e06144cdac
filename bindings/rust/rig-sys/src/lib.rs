//! The C API of librig.so.1, declared for Rust: rig.h, disk.h and
//! service.h, one declaration per C one, with the headers' names.  Read the
//! headers (or their man pages, section 3) for each function's rules; the
//! safe API is the `rig` crate.  tests/layout.rs checks every struct's
//! layout and every constant against the headers as a C compiler sees them.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

/// What the C compiler sees of the headers (build.rs, layout.c), for the
/// layout test.
#[doc(hidden)]
#[allow(non_upper_case_globals)]
pub mod c_layout {
    include!(concat!(env!("OUT_DIR"), "/layout.rs"));
}

pub const RIG_VERSION_MAJOR: c_int = 0;
pub const RIG_VERSION_MINOR: c_int = 1;
pub const RIG_VERSION_PATCH: c_int = 0;
pub const RIG_VERSION: c_int = RIG_VERSION_MAJOR * 10000 + RIG_VERSION_MINOR * 100 + RIG_VERSION_PATCH;
pub const RIG_WORD_BYTES: c_int = 4;
pub const RIG_POINT_VALUE_MAX: u64 = (1u64 << 47) - 1;
pub const RIG_SERVICE_UNBOUNDED: u64 = u64::MAX;
pub const RIG_DISK_KEY: &[u8] = b"rig.disk\0";

// Enums are C ints: a value the library adds later is no undefined
// behaviour here.
pub type rig_status_t = c_int;
pub const RIG_OK: rig_status_t = 0;
pub const RIG_EINVAL: rig_status_t = -1;
pub const RIG_ELOST: rig_status_t = -2;
pub const RIG_ENOMEM: rig_status_t = -3;
pub const RIG_EIO: rig_status_t = -4;
pub const RIG_EOPEN: rig_status_t = -5;
pub const RIG_EINTR: rig_status_t = -6;
pub const RIG_ECALLBACK: rig_status_t = -7;
pub const RIG_EIMAGE: rig_status_t = -8;

pub type rig_memory_t = c_int;
pub const RIG_MEMORY_DEVICE: rig_memory_t = 0;
pub const RIG_MEMORY_PINNED: rig_memory_t = 1;
pub const RIG_MEMORY_MAPPED: rig_memory_t = 2;

pub type rig_access_t = c_int;
pub const RIG_ACCESS_READ: rig_access_t = 1;
pub const RIG_ACCESS_READ_WRITE: rig_access_t = 3;

pub type rig_dma_kind_t = c_int;
pub const RIG_DMA_BUS: rig_dma_kind_t = 1;
pub const RIG_DMA_DMABUF: rig_dma_kind_t = 2;

pub type rig_claim_t = c_int;
pub const RIG_CLAIMED: rig_claim_t = 0;
pub const RIG_CLAIM_WAIT: rig_claim_t = 1;
pub const RIG_CLAIM_DEAD: rig_claim_t = 2;
pub const RIG_CLAIM_EXCLUSIVE: rig_claim_t = 3;
pub const RIG_CLAIM_READ_ONLY: rig_claim_t = 4;
pub const RIG_CLAIM_INVALID: rig_claim_t = 5;

pub type rig_ref_kind_t = c_int;
pub const RIG_REF_READ: rig_ref_kind_t = 1;
pub const RIG_REF_WRITE: rig_ref_kind_t = 2;
pub const RIG_REF_READ_WRITE: rig_ref_kind_t = 3;
pub const RIG_REF_UNORDERED: rig_ref_kind_t = 4;
pub const RIG_REF_ENTRY: rig_ref_kind_t = 5;

pub type rig_part_kind_t = c_int;
pub const RIG_LAUNCH: rig_part_kind_t = 1;
pub const RIG_COPY: rig_part_kind_t = 2;
pub const RIG_FILL: rig_part_kind_t = 3;
pub const RIG_WORDS: rig_part_kind_t = 4;

pub type rig_disk_mode_t = c_int;
pub const RIG_DISK_READ: rig_disk_mode_t = 0;
pub const RIG_DISK_READ_WRITE: rig_disk_mode_t = 1;

/// sig_atomic_t on Linux.
pub type sig_atomic_t = c_int;

macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}
opaque!(
    rig_device_t, rig_buffer_t, rig_export_t, rig_image_t, rig_function_t, rig_submission_t, rig_run_t,
    rig_local_key_t, rig_machine_t, rig_service_stats_t
);

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_open_options_t {
    pub size: usize,
    pub config: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct rig_point_t {
    pub bits: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct rig_box_t {
    pub src_offset: i64,
    pub dst_offset: i64,
    pub width: i64,
    pub rows: i64,
    pub src_pitch: i64,
    pub dst_pitch: i64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_dma_range_t {
    pub address: u64,
    pub bytes: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_dma_t {
    pub size: usize,
    pub kind: rig_dma_kind_t,
    pub ranges: *const rig_dma_range_t,
    pub range_count: usize,
    pub fd: c_int,
    pub offset: i64,
    pub start: i64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_operand_t {
    pub slot: u32,
    pub fixed: *mut rig_buffer_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_ref_t {
    pub kind: rig_ref_kind_t,
    pub memory: rig_operand_t,
    pub at: i64,
    pub access: rig_access_t,
    pub entry: *const rig_function_t,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_word_write_t {
    pub memory: rig_operand_t,
    pub offset: i64,
    pub value: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rig_part_launch_t {
    pub function: *const rig_function_t,
    pub refs: *const rig_ref_t,
    pub ref_count: usize,
    pub params: i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rig_part_copy_t {
    pub src: rig_operand_t,
    pub dst: rig_operand_t,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rig_part_fill_t {
    pub dst: rig_operand_t,
    pub value: u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rig_part_words_t {
    pub writes: *const rig_word_write_t,
    pub count: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union rig_part_u {
    pub launch: rig_part_launch_t,
    pub copy: rig_part_copy_t,
    pub fill: rig_part_fill_t,
    pub words: rig_part_words_t,
    pub reserved: [u64; 8],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rig_part_t {
    pub kind: rig_part_kind_t,
    pub u: rig_part_u,
}

pub type rig_release_fn = Option<unsafe extern "C" fn(context: *mut c_void)>;
pub type rig_probe_fn = Option<unsafe extern "C" fn(name: *const c_char, why: *const c_char, context: *mut c_void)>;
pub type rig_access_fn = Option<unsafe extern "C" fn(bytes: *mut c_void, n: i64, context: *mut c_void) -> c_int>;
pub type rig_local_init_fn = Option<unsafe extern "C" fn(d: *mut rig_device_t, context: *mut c_void) -> *mut c_void>;
pub type rig_local_drop_fn = Option<unsafe extern "C" fn(value: *mut c_void, context: *mut c_void)>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rig_submission_options_t {
    pub size: usize,
    pub keep: rig_release_fn,
    pub keep_context: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_service_options_t {
    pub size: usize,
    pub socket: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_machine_options_t {
    pub size: usize,
    pub name: *const c_char,
    pub key_file: *const c_char,
    pub key_id: *const c_char,
    pub transports: *const c_char,
    pub failure_bound_ms: u32,
}

/// The capability key of a device of another machine (service.h).
pub const RIG_MACHINE_DEVICE: &[u8] = b"rig.machine-device\0";

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_machine_device_t {
    pub size: usize,
    pub id: u32,
    pub name: *const c_char,
    pub arch: *const c_char,
    pub budget: i64,
    pub cache_bytes: i64,
    pub address: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_service_client_info_t {
    pub size: usize,
    pub id: u64,
    pub pid: i64,
    pub uid: u32,
    pub user: *const c_char,
    pub command: *const c_char,
    pub connected_ns: i64,
    pub device_bytes: u64,
    pub quota_bytes: u64,
    pub images: u64,
    pub submissions: u64,
    pub copies: u64,
    pub copied_bytes: u64,
    pub fills: u64,
    pub launches: u64,
    pub waits: u64,
    pub faults: u64,
    pub lost: *const c_char,
    pub uses: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_service_use_info_t {
    pub size: usize,
    pub device: *const c_char,
    pub instances: u64,
    pub bytes: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_service_device_info_t {
    pub size: usize,
    pub name: *const c_char,
    pub clients: u64,
    pub instances: u64,
    pub allocated: u64,
    pub cached: u64,
    pub queued: u64,
    pub busy_ns: u64,
    pub faults: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_service_export_info_t {
    pub size: usize,
    pub exporter: u64,
    pub device: *const c_char,
    pub bytes: u64,
    pub importer: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rig_disk_range_t {
    pub file: *mut rig_buffer_t,
    pub file_offset: i64,
    pub dst: *mut rig_buffer_t,
    pub dst_offset: i64,
    pub bytes: i64,
}

extern "C" {
    // rig.h: version and errors
    pub fn rig_version() -> c_int;
    pub fn rig_last_error() -> *const c_char;
    pub fn rig_status_name(status: rig_status_t) -> *const c_char;
    pub fn rig_error_device() -> *mut rig_device_t;
    pub fn rig_error_bytes() -> i64;
    pub fn rig_error_code() -> c_int;
    pub fn rig_set_interrupt_flag(flag: *mut sig_atomic_t);

    // devices
    pub fn rig_host() -> *mut rig_device_t;
    pub fn rig_open(name: *const c_char, opts: *const rig_open_options_t, out: *mut *mut rig_device_t)
        -> rig_status_t;
    pub fn rig_probe(f: rig_probe_fn, context: *mut c_void) -> rig_status_t;
    pub fn rig_memory_device(name: *const c_char, out: *mut *mut rig_device_t) -> rig_status_t;
    pub fn rig_close(d: *mut rig_device_t) -> rig_status_t;
    pub fn rig_device_name(d: *const rig_device_t) -> *const c_char;
    pub fn rig_device_arch(d: *const rig_device_t) -> *const c_char;
    pub fn rig_device_instruction_set(d: *const rig_device_t) -> *const c_char;
    pub fn rig_device_bus(d: *const rig_device_t) -> *const c_char;
    pub fn rig_device_runs_on_host(d: *const rig_device_t) -> bool;
    pub fn rig_device_alignment(d: *const rig_device_t) -> i64;
    pub fn rig_device_cache_bytes(d: *const rig_device_t) -> i64;
    pub fn rig_device_capability(d: *const rig_device_t, key: *const c_char) -> *const c_void;
    pub fn rig_device_equal(a: *const rig_device_t, b: *const rig_device_t) -> bool;
    pub fn rig_reaches(d: *const rig_device_t, other: *const rig_device_t) -> bool;
    pub fn rig_submitted(d: *const rig_device_t) -> u64;
    pub fn rig_signaled(d: *mut rig_device_t, out: *mut u64) -> rig_status_t;
    pub fn rig_lost(d: *const rig_device_t) -> *const c_char;

    // budgets
    pub fn rig_budget(d: *const rig_device_t) -> i64;
    pub fn rig_allocated(d: *const rig_device_t) -> i64;
    pub fn rig_set_budget(d: *mut rig_device_t, n: i64) -> rig_status_t;
    pub fn rig_cache_limit(d: *const rig_device_t) -> i64;
    pub fn rig_set_cache_limit(d: *mut rig_device_t, n: i64) -> rig_status_t;
    pub fn rig_free_cache(d: *mut rig_device_t) -> rig_status_t;

    // points
    pub fn rig_point_device(p: rig_point_t) -> *mut rig_device_t;
    pub fn rig_point_value(p: rig_point_t) -> u64;
    pub fn rig_point_make(d: *const rig_device_t, value: u64) -> rig_point_t;
    pub fn rig_point_wait(p: rig_point_t) -> rig_status_t;
    pub fn rig_point_reached(p: rig_point_t, out: *mut bool) -> rig_status_t;

    // buffers
    pub fn rig_word() -> c_int;
    pub fn rig_buffer_create(d: *mut rig_device_t, n: i64, memory: rig_memory_t, out: *mut *mut rig_buffer_t)
        -> rig_status_t;
    pub fn rig_buffer_of_bytes(s: *const c_void, n: i64, out: *mut *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_buffer_of_memory(
        p: *mut c_void, n: i64, release: rig_release_fn, context: *mut c_void, out: *mut *mut rig_buffer_t,
    ) -> rig_status_t;
    pub fn rig_buffer_view(b: *mut rig_buffer_t, first: i64, length: i64, out: *mut *mut rig_buffer_t)
        -> rig_status_t;
    pub fn rig_buffer_borrow(d: *mut rig_device_t, b: *mut rig_buffer_t, out: *mut *mut rig_buffer_t)
        -> rig_status_t;
    pub fn rig_buffer_ref(b: *mut rig_buffer_t) -> *mut rig_buffer_t;
    pub fn rig_buffer_unref(b: *mut rig_buffer_t);
    pub fn rig_buffer_device(b: *const rig_buffer_t) -> *mut rig_device_t;
    pub fn rig_buffer_bytes(b: *const rig_buffer_t) -> i64;
    pub fn rig_buffer_is_borrowed(b: *const rig_buffer_t) -> bool;
    pub fn rig_buffer_spans(b: *const rig_buffer_t) -> bool;
    pub fn rig_buffer_fresh(b: *const rig_buffer_t) -> bool;
    pub fn rig_buffer_access(b: *const rig_buffer_t) -> rig_access_t;
    pub fn rig_buffer_dead(b: *const rig_buffer_t) -> *const c_char;
    pub fn rig_buffer_host(b: *const rig_buffer_t) -> *mut c_void;
    pub fn rig_buffer_span(b: *const rig_buffer_t, offset: *mut i64, allocation_bytes: *mut i64);
    pub fn rig_buffer_aligned(b: *const rig_buffer_t, at: i64, n: i64, out: *mut bool) -> rig_status_t;
    pub fn rig_buffer_handle(b: *const rig_buffer_t, handle: *mut u64, offset: *mut i64) -> rig_status_t;
    pub fn rig_buffer_dma(b: *mut rig_buffer_t, fn_: *const c_char, out: *mut rig_dma_t) -> rig_status_t;
    pub fn rig_buffer_overlaps(a: *const rig_buffer_t, b: *const rig_buffer_t) -> bool;
    pub fn rig_buffer_share_byte(a: *const rig_buffer_t, b: *const rig_buffer_t) -> bool;
    pub fn rig_buffer_why(b: *const rig_buffer_t) -> *const c_char;

    // claims and early return
    pub fn rig_buffer_claim(b: *mut rig_buffer_t, access: rig_access_t) -> rig_claim_t;
    pub fn rig_buffer_release(b: *mut rig_buffer_t);
    pub fn rig_claim_begin(b: *mut rig_buffer_t, exclusive: *mut bool) -> rig_status_t;
    pub fn rig_claim_end(b: *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_claim_consume(b: *mut rig_buffer_t, why: *const c_char, out: *mut *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_claim_hold(b: *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_claim_unhold(b: *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_claim_share(b: *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_buffer_free(b: *mut rig_buffer_t, why: *const c_char, freed: *mut bool) -> rig_status_t;
    pub fn rig_buffer_unborrow(b: *mut rig_buffer_t, why: *const c_char, ended: *mut bool) -> rig_status_t;

    // failure and values per device
    pub fn rig_fail(why: *const c_char) -> rig_status_t;
    pub fn rig_failure() -> *const c_char;
    pub fn rig_local_new_key(init: rig_local_init_fn, drop: rig_local_drop_fn, context: *mut c_void)
        -> *mut rig_local_key_t;
    pub fn rig_local_get(key: *mut rig_local_key_t, d: *mut rig_device_t, out: *mut *mut c_void) -> rig_status_t;

    // host access
    pub fn rig_buffer_read(b: *mut rig_buffer_t, elem_size: i64, f: rig_access_fn, context: *mut c_void)
        -> rig_status_t;
    pub fn rig_buffer_write(b: *mut rig_buffer_t, elem_size: i64, f: rig_access_fn, context: *mut c_void)
        -> rig_status_t;
    pub fn rig_buffer_wait(b: *mut rig_buffer_t, access: rig_access_t) -> rig_status_t;
    pub fn rig_buffer_reached(b: *mut rig_buffer_t, access: rig_access_t, out: *mut bool) -> rig_status_t;
    pub fn rig_buffer_export(b: *mut rig_buffer_t, elem_size: i64, out: *mut *mut rig_export_t) -> rig_status_t;
    pub fn rig_export_bytes(e: *const rig_export_t, n: *mut i64) -> *mut c_void;
    pub fn rig_export_unref(e: *mut rig_export_t);

    // copying
    pub fn rig_row(src_offset: i64, dst_offset: i64, n: i64) -> rig_box_t;
    pub fn rig_buffer_submit_copy(
        src: *mut rig_buffer_t, dst: *mut rig_buffer_t, boxes: *const rig_box_t, nboxes: usize,
        waits: *const rig_point_t, nwaits: usize, out: *mut rig_point_t,
    ) -> rig_status_t;
    pub fn rig_buffer_copy(src: *mut rig_buffer_t, dst: *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_buffer_submit_fill(
        b: *mut rig_buffer_t, c: u8, waits: *const rig_point_t, nwaits: usize, out: *mut rig_point_t,
    ) -> rig_status_t;
    pub fn rig_buffer_fill(b: *mut rig_buffer_t, c: u8) -> rig_status_t;
    pub fn rig_buffer_blit_from_bytes(
        s: *const c_void, s_len: i64, s_first: i64, b: *mut rig_buffer_t, b_first: i64, n: i64,
    ) -> rig_status_t;
    pub fn rig_buffer_blit_to_bytes(
        b: *mut rig_buffer_t, b_first: i64, s: *mut c_void, s_len: i64, s_first: i64, n: i64,
    ) -> rig_status_t;

    // images, submissions, runs
    pub fn rig_image_load(d: *mut rig_device_t, bytes: *const c_void, n: i64, out: *mut *mut rig_image_t)
        -> rig_status_t;
    pub fn rig_image_ref(i: *mut rig_image_t) -> *mut rig_image_t;
    pub fn rig_image_unref(i: *mut rig_image_t);
    pub fn rig_image_device(i: *const rig_image_t) -> *mut rig_device_t;
    pub fn rig_image_prepare(i: *mut rig_image_t, name: *const c_char) -> rig_status_t;
    pub fn rig_image_resolve(i: *mut rig_image_t, name: *const c_char, out: *mut *mut rig_function_t)
        -> rig_status_t;
    pub fn rig_function_name(f: *const rig_function_t) -> *const c_char;
    pub fn rig_function_image(f: *const rig_function_t) -> *mut rig_image_t;
    pub fn rig_function_max_threads(f: *const rig_function_t) -> i64;
    pub fn rig_submission_make(
        d: *mut rig_device_t, parts: *const rig_part_t, n: usize, opts: *const rig_submission_options_t,
        out: *mut *mut rig_submission_t,
    ) -> rig_status_t;
    pub fn rig_submission_ref(s: *mut rig_submission_t) -> *mut rig_submission_t;
    pub fn rig_submission_unref(s: *mut rig_submission_t);
    pub fn rig_submission_slots(s: *const rig_submission_t) -> usize;
    pub fn rig_submission_block(s: *const rig_submission_t, part: usize) -> i64;
    pub fn rig_submission_take(s: *mut rig_submission_t, out: *mut *mut rig_run_t) -> rig_status_t;
    pub fn rig_run_submission(r: *const rig_run_t) -> *mut rig_submission_t;
    pub fn rig_run_groups(r: *mut rig_run_t, k: i64, x: i64, y: i64, z: i64) -> rig_status_t;
    pub fn rig_run_threads(r: *mut rig_run_t, k: i64, x: i64, y: i64, z: i64) -> rig_status_t;
    pub fn rig_run_shared(r: *mut rig_run_t, k: i64, bytes: i64) -> rig_status_t;
    pub fn rig_run_int8(r: *mut rig_run_t, k: i64, at: i64, v: i8) -> rig_status_t;
    pub fn rig_run_int16(r: *mut rig_run_t, k: i64, at: i64, v: i16) -> rig_status_t;
    pub fn rig_run_int32(r: *mut rig_run_t, k: i64, at: i64, v: i32) -> rig_status_t;
    pub fn rig_run_int64(r: *mut rig_run_t, k: i64, at: i64, v: i64) -> rig_status_t;
    pub fn rig_run_float32(r: *mut rig_run_t, k: i64, at: i64, v: f32) -> rig_status_t;
    pub fn rig_run_float64(r: *mut rig_run_t, k: i64, at: i64, v: f64) -> rig_status_t;
    pub fn rig_run_bytes(r: *mut rig_run_t, k: i64, at: i64, src: *const c_void, n: i64) -> rig_status_t;
    pub fn rig_run_fill(r: *mut rig_run_t, k: i64, value: u8) -> rig_status_t;
    pub fn rig_submit(
        r: *mut rig_run_t, buffers: *const *mut rig_buffer_t, nbuffers: usize, waits: *const rig_point_t,
        nwaits: usize, out: *mut rig_point_t,
    ) -> rig_status_t;

    // disk.h
    pub fn rig_disk_device(out: *mut *mut rig_device_t) -> rig_status_t;
    pub fn rig_disk_open(
        path: *const c_char, mode: rig_disk_mode_t, offset: i64, length: i64, out: *mut *mut rig_buffer_t,
    ) -> rig_status_t;
    pub fn rig_disk_read_ranges(ranges: *const rig_disk_range_t, count: usize) -> rig_status_t;
    pub fn rig_disk_sync(file: *mut rig_buffer_t) -> rig_status_t;

    // service.h
    pub fn rig_service_connect(opts: *const rig_service_options_t, machine: *mut *mut rig_machine_t)
        -> rig_status_t;
    pub fn rig_machine_connect(
        address: *const c_char, opts: *const rig_machine_options_t, machine: *mut *mut rig_machine_t,
    ) -> rig_status_t;
    pub fn rig_machine_name(m: *const rig_machine_t) -> *const c_char;
    pub fn rig_machine_lost(m: *mut rig_machine_t) -> *const c_char;
    pub fn rig_machine_close(m: *mut rig_machine_t) -> rig_status_t;
    pub fn rig_machine_open(
        m: *mut rig_machine_t, name: *const c_char, opts: *const rig_open_options_t, out: *mut *mut rig_device_t,
    ) -> rig_status_t;
    pub fn rig_service_share(b: *mut rig_buffer_t, token: *mut u64) -> rig_status_t;
    pub fn rig_service_import(d: *mut rig_device_t, token: u64, out: *mut *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_service_share_fd(b: *mut rig_buffer_t, fd: *mut c_int) -> rig_status_t;
    pub fn rig_service_import_fd(d: *mut rig_device_t, fd: c_int, out: *mut *mut rig_buffer_t) -> rig_status_t;
    pub fn rig_service_stats(opts: *const rig_service_options_t, out: *mut *mut rig_service_stats_t) -> rig_status_t;
    pub fn rig_service_stats_release(s: *mut rig_service_stats_t);
    pub fn rig_service_stats_clients(s: *const rig_service_stats_t) -> usize;
    pub fn rig_service_stats_client(s: *const rig_service_stats_t, i: usize, out: *mut rig_service_client_info_t)
        -> rig_status_t;
    pub fn rig_service_stats_use(
        s: *const rig_service_stats_t, client: usize, j: usize, out: *mut rig_service_use_info_t,
    ) -> rig_status_t;
    pub fn rig_service_stats_devices(s: *const rig_service_stats_t) -> usize;
    pub fn rig_service_stats_device(s: *const rig_service_stats_t, i: usize, out: *mut rig_service_device_info_t)
        -> rig_status_t;
    pub fn rig_service_stats_exports(s: *const rig_service_stats_t) -> usize;
    pub fn rig_service_stats_export(s: *const rig_service_stats_t, i: usize, out: *mut rig_service_export_info_t)
        -> rig_status_t;
    pub fn rig_service_drop(opts: *const rig_service_options_t, client: u64) -> rig_status_t;
}
