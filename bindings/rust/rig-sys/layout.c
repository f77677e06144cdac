/* Prints, as Rust constants, what the C compiler sees of rig's headers:
 * each struct's size and alignment, its members' offsets, and the macros'
 * and enums' values.  build.rs runs it; tests/layout.rs compares them with
 * the declarations of src/lib.rs. */
#include <rig/disk.h>
#include <rig/rig.h>
#include <rig/service.h>

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

#define SIZE(t) printf("pub const SIZE_%s: usize = %zu;\npub const ALIGN_%s: usize = %zu;\n", #t, sizeof(t), #t, alignof(t))
#define OFFSET_AS(t, m, name) printf("pub const OFFSET_%s_%s: usize = %zu;\n", #t, #name, offsetof(t, m))
#define OFFSET(t, m) OFFSET_AS(t, m, m)
#define VALUE(name) printf("pub const C_%s: i128 = %lld;\n", #name, (long long)(name))
#define UVALUE(name) printf("pub const C_%s: i128 = %llu;\n", #name, (unsigned long long)(name))

int main(void) {
  SIZE(rig_open_options_t);
  OFFSET(rig_open_options_t, config);
  SIZE(rig_point_t);
  SIZE(rig_box_t);
  OFFSET(rig_box_t, src_offset);
  OFFSET(rig_box_t, dst_offset);
  OFFSET(rig_box_t, width);
  OFFSET(rig_box_t, rows);
  OFFSET(rig_box_t, src_pitch);
  OFFSET(rig_box_t, dst_pitch);
  SIZE(rig_dma_range_t);
  SIZE(rig_dma_t);
  OFFSET(rig_dma_t, kind);
  OFFSET(rig_dma_t, ranges);
  OFFSET(rig_dma_t, range_count);
  OFFSET(rig_dma_t, fd);
  OFFSET(rig_dma_t, offset);
  OFFSET(rig_dma_t, start);
  SIZE(rig_operand_t);
  OFFSET(rig_operand_t, fixed);
  SIZE(rig_ref_t);
  OFFSET(rig_ref_t, memory);
  OFFSET(rig_ref_t, at);
  OFFSET(rig_ref_t, access);
  OFFSET(rig_ref_t, entry);
  SIZE(rig_word_write_t);
  OFFSET(rig_word_write_t, offset);
  OFFSET(rig_word_write_t, value);
  SIZE(rig_part_t);
  OFFSET(rig_part_t, u);
  OFFSET_AS(rig_part_t, u.launch.refs, u_launch_refs);
  OFFSET_AS(rig_part_t, u.launch.ref_count, u_launch_ref_count);
  OFFSET_AS(rig_part_t, u.launch.params, u_launch_params);
  OFFSET_AS(rig_part_t, u.copy.dst, u_copy_dst);
  OFFSET_AS(rig_part_t, u.fill.value, u_fill_value);
  OFFSET_AS(rig_part_t, u.words.count, u_words_count);
  SIZE(rig_submission_options_t);
  OFFSET(rig_submission_options_t, keep);
  OFFSET(rig_submission_options_t, keep_context);
  SIZE(rig_service_options_t);
  OFFSET(rig_service_options_t, socket);
  SIZE(rig_machine_options_t);
  OFFSET(rig_machine_options_t, name);
  OFFSET(rig_machine_options_t, key_file);
  OFFSET(rig_machine_options_t, key_id);
  OFFSET(rig_machine_options_t, transports);
  OFFSET(rig_machine_options_t, failure_bound_ms);
  SIZE(rig_machine_device_t);
  OFFSET(rig_machine_device_t, id);
  OFFSET(rig_machine_device_t, name);
  OFFSET(rig_machine_device_t, arch);
  OFFSET(rig_machine_device_t, budget);
  OFFSET(rig_machine_device_t, cache_bytes);
  OFFSET(rig_machine_device_t, address);
  SIZE(rig_service_client_info_t);
  OFFSET(rig_service_client_info_t, id);
  OFFSET(rig_service_client_info_t, pid);
  OFFSET(rig_service_client_info_t, uid);
  OFFSET(rig_service_client_info_t, user);
  OFFSET(rig_service_client_info_t, command);
  OFFSET(rig_service_client_info_t, connected_ns);
  OFFSET(rig_service_client_info_t, device_bytes);
  OFFSET(rig_service_client_info_t, quota_bytes);
  OFFSET(rig_service_client_info_t, images);
  OFFSET(rig_service_client_info_t, submissions);
  OFFSET(rig_service_client_info_t, copies);
  OFFSET(rig_service_client_info_t, copied_bytes);
  OFFSET(rig_service_client_info_t, fills);
  OFFSET(rig_service_client_info_t, launches);
  OFFSET(rig_service_client_info_t, waits);
  OFFSET(rig_service_client_info_t, faults);
  OFFSET(rig_service_client_info_t, lost);
  OFFSET(rig_service_client_info_t, uses);
  SIZE(rig_service_use_info_t);
  OFFSET(rig_service_use_info_t, device);
  OFFSET(rig_service_use_info_t, instances);
  OFFSET(rig_service_use_info_t, bytes);
  SIZE(rig_service_device_info_t);
  OFFSET(rig_service_device_info_t, name);
  OFFSET(rig_service_device_info_t, clients);
  OFFSET(rig_service_device_info_t, instances);
  OFFSET(rig_service_device_info_t, allocated);
  OFFSET(rig_service_device_info_t, cached);
  OFFSET(rig_service_device_info_t, queued);
  OFFSET(rig_service_device_info_t, busy_ns);
  OFFSET(rig_service_device_info_t, faults);
  SIZE(rig_service_export_info_t);
  OFFSET(rig_service_export_info_t, exporter);
  OFFSET(rig_service_export_info_t, device);
  OFFSET(rig_service_export_info_t, bytes);
  OFFSET(rig_service_export_info_t, importer);
  SIZE(rig_disk_range_t);
  OFFSET(rig_disk_range_t, file_offset);
  OFFSET(rig_disk_range_t, dst);
  OFFSET(rig_disk_range_t, dst_offset);
  OFFSET(rig_disk_range_t, bytes);
  SIZE(rig_status_t);
  SIZE(rig_memory_t);
  SIZE(sig_atomic_t);

  VALUE(RIG_VERSION);
  VALUE(RIG_WORD_BYTES);
  VALUE(RIG_POINT_VALUE_MAX);
  UVALUE(RIG_SERVICE_UNBOUNDED);
  VALUE(RIG_OK);
  VALUE(RIG_EINVAL);
  VALUE(RIG_ELOST);
  VALUE(RIG_ENOMEM);
  VALUE(RIG_EIO);
  VALUE(RIG_EOPEN);
  VALUE(RIG_EINTR);
  VALUE(RIG_ECALLBACK);
  VALUE(RIG_EIMAGE);
  VALUE(RIG_MEMORY_DEVICE);
  VALUE(RIG_MEMORY_PINNED);
  VALUE(RIG_MEMORY_MAPPED);
  VALUE(RIG_ACCESS_READ);
  VALUE(RIG_ACCESS_READ_WRITE);
  VALUE(RIG_DMA_BUS);
  VALUE(RIG_DMA_DMABUF);
  VALUE(RIG_CLAIMED);
  VALUE(RIG_CLAIM_WAIT);
  VALUE(RIG_CLAIM_DEAD);
  VALUE(RIG_CLAIM_EXCLUSIVE);
  VALUE(RIG_CLAIM_READ_ONLY);
  VALUE(RIG_CLAIM_INVALID);
  VALUE(RIG_REF_READ);
  VALUE(RIG_REF_WRITE);
  VALUE(RIG_REF_READ_WRITE);
  VALUE(RIG_REF_UNORDERED);
  VALUE(RIG_REF_ENTRY);
  VALUE(RIG_LAUNCH);
  VALUE(RIG_COPY);
  VALUE(RIG_FILL);
  VALUE(RIG_WORDS);
  VALUE(RIG_DISK_READ);
  VALUE(RIG_DISK_READ_WRITE);
  return 0;
}
