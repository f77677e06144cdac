//! The declarations of src/lib.rs against rig's headers as a C compiler
//! sees them (c_layout, made by build.rs from layout.c): every struct's
//! size, alignment and member offsets, every constant, and a declaration
//! for every function the headers declare.
use rig_sys::c_layout as c;
use rig_sys::*;
use std::mem::{align_of, size_of, MaybeUninit};

macro_rules! offset {
    ($t:ty, $($field:tt).+) => {{
        let value = MaybeUninit::<$t>::uninit();
        let base = value.as_ptr();
        // Only addresses: nothing is read.
        #[allow(unused_unsafe)]
        let field = unsafe { std::ptr::addr_of!((*base).$($field).+) };
        field as usize - base as usize
    }};
}

macro_rules! same_layout {
    ($t:ty, $size:expr, $align:expr) => {
        assert_eq!(size_of::<$t>(), $size, "size of {}", stringify!($t));
        assert_eq!(align_of::<$t>(), $align, "alignment of {}", stringify!($t));
    };
}

#[test]
fn structs_match_the_headers() {
    same_layout!(rig_open_options_t, c::SIZE_rig_open_options_t, c::ALIGN_rig_open_options_t);
    assert_eq!(offset!(rig_open_options_t, config), c::OFFSET_rig_open_options_t_config);
    same_layout!(rig_point_t, c::SIZE_rig_point_t, c::ALIGN_rig_point_t);
    same_layout!(rig_box_t, c::SIZE_rig_box_t, c::ALIGN_rig_box_t);
    assert_eq!(offset!(rig_box_t, src_offset), c::OFFSET_rig_box_t_src_offset);
    assert_eq!(offset!(rig_box_t, dst_offset), c::OFFSET_rig_box_t_dst_offset);
    assert_eq!(offset!(rig_box_t, width), c::OFFSET_rig_box_t_width);
    assert_eq!(offset!(rig_box_t, rows), c::OFFSET_rig_box_t_rows);
    assert_eq!(offset!(rig_box_t, src_pitch), c::OFFSET_rig_box_t_src_pitch);
    assert_eq!(offset!(rig_box_t, dst_pitch), c::OFFSET_rig_box_t_dst_pitch);
    same_layout!(rig_dma_range_t, c::SIZE_rig_dma_range_t, c::ALIGN_rig_dma_range_t);
    same_layout!(rig_dma_t, c::SIZE_rig_dma_t, c::ALIGN_rig_dma_t);
    assert_eq!(offset!(rig_dma_t, kind), c::OFFSET_rig_dma_t_kind);
    assert_eq!(offset!(rig_dma_t, ranges), c::OFFSET_rig_dma_t_ranges);
    assert_eq!(offset!(rig_dma_t, range_count), c::OFFSET_rig_dma_t_range_count);
    assert_eq!(offset!(rig_dma_t, fd), c::OFFSET_rig_dma_t_fd);
    assert_eq!(offset!(rig_dma_t, offset), c::OFFSET_rig_dma_t_offset);
    assert_eq!(offset!(rig_dma_t, start), c::OFFSET_rig_dma_t_start);
    same_layout!(rig_operand_t, c::SIZE_rig_operand_t, c::ALIGN_rig_operand_t);
    assert_eq!(offset!(rig_operand_t, fixed), c::OFFSET_rig_operand_t_fixed);
    same_layout!(rig_ref_t, c::SIZE_rig_ref_t, c::ALIGN_rig_ref_t);
    assert_eq!(offset!(rig_ref_t, memory), c::OFFSET_rig_ref_t_memory);
    assert_eq!(offset!(rig_ref_t, at), c::OFFSET_rig_ref_t_at);
    assert_eq!(offset!(rig_ref_t, access), c::OFFSET_rig_ref_t_access);
    assert_eq!(offset!(rig_ref_t, entry), c::OFFSET_rig_ref_t_entry);
    same_layout!(rig_word_write_t, c::SIZE_rig_word_write_t, c::ALIGN_rig_word_write_t);
    assert_eq!(offset!(rig_word_write_t, offset), c::OFFSET_rig_word_write_t_offset);
    assert_eq!(offset!(rig_word_write_t, value), c::OFFSET_rig_word_write_t_value);
    same_layout!(rig_part_t, c::SIZE_rig_part_t, c::ALIGN_rig_part_t);
    assert_eq!(offset!(rig_part_t, u), c::OFFSET_rig_part_t_u);
    assert_eq!(offset!(rig_part_t, u.launch.refs), c::OFFSET_rig_part_t_u_launch_refs);
    assert_eq!(offset!(rig_part_t, u.launch.ref_count), c::OFFSET_rig_part_t_u_launch_ref_count);
    assert_eq!(offset!(rig_part_t, u.launch.params), c::OFFSET_rig_part_t_u_launch_params);
    assert_eq!(offset!(rig_part_t, u.copy.dst), c::OFFSET_rig_part_t_u_copy_dst);
    assert_eq!(offset!(rig_part_t, u.fill.value), c::OFFSET_rig_part_t_u_fill_value);
    assert_eq!(offset!(rig_part_t, u.words.count), c::OFFSET_rig_part_t_u_words_count);
    same_layout!(rig_submission_options_t, c::SIZE_rig_submission_options_t, c::ALIGN_rig_submission_options_t);
    assert_eq!(offset!(rig_submission_options_t, keep), c::OFFSET_rig_submission_options_t_keep);
    assert_eq!(offset!(rig_submission_options_t, keep_context), c::OFFSET_rig_submission_options_t_keep_context);
    same_layout!(rig_service_options_t, c::SIZE_rig_service_options_t, c::ALIGN_rig_service_options_t);
    assert_eq!(offset!(rig_service_options_t, socket), c::OFFSET_rig_service_options_t_socket);
    same_layout!(rig_machine_options_t, c::SIZE_rig_machine_options_t, c::ALIGN_rig_machine_options_t);
    assert_eq!(offset!(rig_machine_options_t, name), c::OFFSET_rig_machine_options_t_name);
    assert_eq!(offset!(rig_machine_options_t, key_file), c::OFFSET_rig_machine_options_t_key_file);
    assert_eq!(offset!(rig_machine_options_t, key_id), c::OFFSET_rig_machine_options_t_key_id);
    assert_eq!(offset!(rig_machine_options_t, transports), c::OFFSET_rig_machine_options_t_transports);
    assert_eq!(offset!(rig_machine_options_t, failure_bound_ms), c::OFFSET_rig_machine_options_t_failure_bound_ms);
    same_layout!(rig_machine_device_t, c::SIZE_rig_machine_device_t, c::ALIGN_rig_machine_device_t);
    assert_eq!(offset!(rig_machine_device_t, id), c::OFFSET_rig_machine_device_t_id);
    assert_eq!(offset!(rig_machine_device_t, name), c::OFFSET_rig_machine_device_t_name);
    assert_eq!(offset!(rig_machine_device_t, arch), c::OFFSET_rig_machine_device_t_arch);
    assert_eq!(offset!(rig_machine_device_t, budget), c::OFFSET_rig_machine_device_t_budget);
    assert_eq!(offset!(rig_machine_device_t, cache_bytes), c::OFFSET_rig_machine_device_t_cache_bytes);
    assert_eq!(offset!(rig_machine_device_t, address), c::OFFSET_rig_machine_device_t_address);
    same_layout!(rig_service_client_info_t, c::SIZE_rig_service_client_info_t, c::ALIGN_rig_service_client_info_t);
    assert_eq!(offset!(rig_service_client_info_t, id), c::OFFSET_rig_service_client_info_t_id);
    assert_eq!(offset!(rig_service_client_info_t, pid), c::OFFSET_rig_service_client_info_t_pid);
    assert_eq!(offset!(rig_service_client_info_t, uid), c::OFFSET_rig_service_client_info_t_uid);
    assert_eq!(offset!(rig_service_client_info_t, user), c::OFFSET_rig_service_client_info_t_user);
    assert_eq!(offset!(rig_service_client_info_t, command), c::OFFSET_rig_service_client_info_t_command);
    assert_eq!(offset!(rig_service_client_info_t, connected_ns), c::OFFSET_rig_service_client_info_t_connected_ns);
    assert_eq!(offset!(rig_service_client_info_t, device_bytes), c::OFFSET_rig_service_client_info_t_device_bytes);
    assert_eq!(offset!(rig_service_client_info_t, quota_bytes), c::OFFSET_rig_service_client_info_t_quota_bytes);
    assert_eq!(offset!(rig_service_client_info_t, images), c::OFFSET_rig_service_client_info_t_images);
    assert_eq!(offset!(rig_service_client_info_t, submissions), c::OFFSET_rig_service_client_info_t_submissions);
    assert_eq!(offset!(rig_service_client_info_t, copies), c::OFFSET_rig_service_client_info_t_copies);
    assert_eq!(offset!(rig_service_client_info_t, copied_bytes), c::OFFSET_rig_service_client_info_t_copied_bytes);
    assert_eq!(offset!(rig_service_client_info_t, fills), c::OFFSET_rig_service_client_info_t_fills);
    assert_eq!(offset!(rig_service_client_info_t, launches), c::OFFSET_rig_service_client_info_t_launches);
    assert_eq!(offset!(rig_service_client_info_t, waits), c::OFFSET_rig_service_client_info_t_waits);
    assert_eq!(offset!(rig_service_client_info_t, faults), c::OFFSET_rig_service_client_info_t_faults);
    assert_eq!(offset!(rig_service_client_info_t, lost), c::OFFSET_rig_service_client_info_t_lost);
    assert_eq!(offset!(rig_service_client_info_t, uses), c::OFFSET_rig_service_client_info_t_uses);
    same_layout!(rig_service_use_info_t, c::SIZE_rig_service_use_info_t, c::ALIGN_rig_service_use_info_t);
    assert_eq!(offset!(rig_service_use_info_t, device), c::OFFSET_rig_service_use_info_t_device);
    assert_eq!(offset!(rig_service_use_info_t, instances), c::OFFSET_rig_service_use_info_t_instances);
    assert_eq!(offset!(rig_service_use_info_t, bytes), c::OFFSET_rig_service_use_info_t_bytes);
    same_layout!(rig_service_device_info_t, c::SIZE_rig_service_device_info_t, c::ALIGN_rig_service_device_info_t);
    assert_eq!(offset!(rig_service_device_info_t, name), c::OFFSET_rig_service_device_info_t_name);
    assert_eq!(offset!(rig_service_device_info_t, clients), c::OFFSET_rig_service_device_info_t_clients);
    assert_eq!(offset!(rig_service_device_info_t, instances), c::OFFSET_rig_service_device_info_t_instances);
    assert_eq!(offset!(rig_service_device_info_t, allocated), c::OFFSET_rig_service_device_info_t_allocated);
    assert_eq!(offset!(rig_service_device_info_t, cached), c::OFFSET_rig_service_device_info_t_cached);
    assert_eq!(offset!(rig_service_device_info_t, queued), c::OFFSET_rig_service_device_info_t_queued);
    assert_eq!(offset!(rig_service_device_info_t, busy_ns), c::OFFSET_rig_service_device_info_t_busy_ns);
    assert_eq!(offset!(rig_service_device_info_t, faults), c::OFFSET_rig_service_device_info_t_faults);
    same_layout!(rig_service_export_info_t, c::SIZE_rig_service_export_info_t, c::ALIGN_rig_service_export_info_t);
    assert_eq!(offset!(rig_service_export_info_t, exporter), c::OFFSET_rig_service_export_info_t_exporter);
    assert_eq!(offset!(rig_service_export_info_t, device), c::OFFSET_rig_service_export_info_t_device);
    assert_eq!(offset!(rig_service_export_info_t, bytes), c::OFFSET_rig_service_export_info_t_bytes);
    assert_eq!(offset!(rig_service_export_info_t, importer), c::OFFSET_rig_service_export_info_t_importer);
    same_layout!(rig_disk_range_t, c::SIZE_rig_disk_range_t, c::ALIGN_rig_disk_range_t);
    assert_eq!(offset!(rig_disk_range_t, file_offset), c::OFFSET_rig_disk_range_t_file_offset);
    assert_eq!(offset!(rig_disk_range_t, dst), c::OFFSET_rig_disk_range_t_dst);
    assert_eq!(offset!(rig_disk_range_t, dst_offset), c::OFFSET_rig_disk_range_t_dst_offset);
    assert_eq!(offset!(rig_disk_range_t, bytes), c::OFFSET_rig_disk_range_t_bytes);
    same_layout!(rig_status_t, c::SIZE_rig_status_t, c::ALIGN_rig_status_t);
    same_layout!(rig_memory_t, c::SIZE_rig_memory_t, c::ALIGN_rig_memory_t);
    same_layout!(sig_atomic_t, c::SIZE_sig_atomic_t, c::ALIGN_sig_atomic_t);
}

#[test]
fn constants_match_the_headers() {
    let pairs: &[(&str, i128, i128)] = &[
        ("RIG_VERSION", RIG_VERSION as i128, c::C_RIG_VERSION),
        ("RIG_WORD_BYTES", RIG_WORD_BYTES as i128, c::C_RIG_WORD_BYTES),
        ("RIG_POINT_VALUE_MAX", RIG_POINT_VALUE_MAX as i128, c::C_RIG_POINT_VALUE_MAX),
        ("RIG_SERVICE_UNBOUNDED", RIG_SERVICE_UNBOUNDED as i128, c::C_RIG_SERVICE_UNBOUNDED),
        ("RIG_OK", RIG_OK as i128, c::C_RIG_OK),
        ("RIG_EINVAL", RIG_EINVAL as i128, c::C_RIG_EINVAL),
        ("RIG_ELOST", RIG_ELOST as i128, c::C_RIG_ELOST),
        ("RIG_ENOMEM", RIG_ENOMEM as i128, c::C_RIG_ENOMEM),
        ("RIG_EIO", RIG_EIO as i128, c::C_RIG_EIO),
        ("RIG_EOPEN", RIG_EOPEN as i128, c::C_RIG_EOPEN),
        ("RIG_EINTR", RIG_EINTR as i128, c::C_RIG_EINTR),
        ("RIG_ECALLBACK", RIG_ECALLBACK as i128, c::C_RIG_ECALLBACK),
        ("RIG_EIMAGE", RIG_EIMAGE as i128, c::C_RIG_EIMAGE),
        ("RIG_MEMORY_DEVICE", RIG_MEMORY_DEVICE as i128, c::C_RIG_MEMORY_DEVICE),
        ("RIG_MEMORY_PINNED", RIG_MEMORY_PINNED as i128, c::C_RIG_MEMORY_PINNED),
        ("RIG_MEMORY_MAPPED", RIG_MEMORY_MAPPED as i128, c::C_RIG_MEMORY_MAPPED),
        ("RIG_ACCESS_READ", RIG_ACCESS_READ as i128, c::C_RIG_ACCESS_READ),
        ("RIG_ACCESS_READ_WRITE", RIG_ACCESS_READ_WRITE as i128, c::C_RIG_ACCESS_READ_WRITE),
        ("RIG_DMA_BUS", RIG_DMA_BUS as i128, c::C_RIG_DMA_BUS),
        ("RIG_DMA_DMABUF", RIG_DMA_DMABUF as i128, c::C_RIG_DMA_DMABUF),
        ("RIG_CLAIMED", RIG_CLAIMED as i128, c::C_RIG_CLAIMED),
        ("RIG_CLAIM_WAIT", RIG_CLAIM_WAIT as i128, c::C_RIG_CLAIM_WAIT),
        ("RIG_CLAIM_DEAD", RIG_CLAIM_DEAD as i128, c::C_RIG_CLAIM_DEAD),
        ("RIG_CLAIM_EXCLUSIVE", RIG_CLAIM_EXCLUSIVE as i128, c::C_RIG_CLAIM_EXCLUSIVE),
        ("RIG_CLAIM_READ_ONLY", RIG_CLAIM_READ_ONLY as i128, c::C_RIG_CLAIM_READ_ONLY),
        ("RIG_CLAIM_INVALID", RIG_CLAIM_INVALID as i128, c::C_RIG_CLAIM_INVALID),
        ("RIG_REF_READ", RIG_REF_READ as i128, c::C_RIG_REF_READ),
        ("RIG_REF_WRITE", RIG_REF_WRITE as i128, c::C_RIG_REF_WRITE),
        ("RIG_REF_READ_WRITE", RIG_REF_READ_WRITE as i128, c::C_RIG_REF_READ_WRITE),
        ("RIG_REF_UNORDERED", RIG_REF_UNORDERED as i128, c::C_RIG_REF_UNORDERED),
        ("RIG_REF_ENTRY", RIG_REF_ENTRY as i128, c::C_RIG_REF_ENTRY),
        ("RIG_LAUNCH", RIG_LAUNCH as i128, c::C_RIG_LAUNCH),
        ("RIG_COPY", RIG_COPY as i128, c::C_RIG_COPY),
        ("RIG_FILL", RIG_FILL as i128, c::C_RIG_FILL),
        ("RIG_WORDS", RIG_WORDS as i128, c::C_RIG_WORDS),
        ("RIG_DISK_READ", RIG_DISK_READ as i128, c::C_RIG_DISK_READ),
        ("RIG_DISK_READ_WRITE", RIG_DISK_READ_WRITE as i128, c::C_RIG_DISK_READ_WRITE),
    ];
    for (name, rust, c_value) in pairs {
        assert_eq!(rust, c_value, "{name}");
    }
}

/// The functions a header declares: each `rig_NAME(` that follows a return
/// type at the start of a declaration (not a typedef of a callback).
fn header_functions(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for statement in text.split(';') {
        let statement = statement.trim_start();
        if statement.contains("typedef") && !statement.contains("rig_status_t rig_") {
            continue;
        }
        for (at, _) in statement.match_indices("rig_") {
            let rest = &statement[at..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let before = statement[..at].trim_end();
            let is_declared = rest[end..].starts_with('(')
                && (before.ends_with('*') || before.ends_with("_t") || before.ends_with("int")
                    || before.ends_with("void") || before.ends_with("bool") || before.ends_with("int64_t")
                    || before.ends_with("uint64_t") || before.ends_with("char"));
            if is_declared && !before.ends_with("(*") {
                names.push(rest[..end].to_owned());
                break;
            }
        }
    }
    names
}

#[test]
fn every_function_of_the_headers_is_declared() {
    let declared = include_str!("../src/lib.rs");
    let dir = c::INCLUDE_DIRS.iter().find(|d| std::path::Path::new(d).join("rig/rig.h").exists())
        .expect("the headers build.rs compiled against");
    let mut count = 0;
    for header in ["rig.h", "disk.h", "service.h"] {
        let text = std::fs::read_to_string(format!("{dir}/rig/{header}")).unwrap();
        // Comments out: they name functions too.
        let mut code = String::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("/*") {
            code.push_str(&rest[..start]);
            rest = &rest[start + rest[start..].find("*/").unwrap() + 2..];
        }
        code.push_str(rest);
        for name in header_functions(&code) {
            count += 1;
            assert!(declared.contains(&format!("pub fn {name}(")), "{header}: {name} is not declared in rig-sys");
        }
    }
    assert!(count > 100, "only {count} functions found in the headers");
}
