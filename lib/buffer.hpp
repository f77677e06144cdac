// Buffers: a range of bytes of one allocation, on one device.
#pragma once

#include "allocation.hpp"
#include "rig_internal/handles.hpp"
#include "rig_internal/buffers.hpp"

struct rig_buffer : rig::HandleRecord<rig::HandleType::Buffer> {
  std::atomic<int64_t> refs{1};
  rig::Allocation *alloc = nullptr;
  rig_device_t *device = nullptr;  // the device the buffer is on
  int64_t offset = 0;              // of its first byte in the allocation
  int64_t length = 0;
  bool borrowed = false;           // over memory that its device does not hold
  // The borrow this buffer is or views, which holds the borrowing device's
  // mapping; nullptr for a buffer on the memory's own device.
  rig_buffer *borrow = nullptr;
  rig::Mapping *mapping = nullptr;  // held by a borrow itself, not its views
  uint32_t generation = 0;          // the allocation's, when the buffer was made
  bool read_only = false;           // made by a consume of memory not held exclusive
  // A borrow's own state: the reason unborrow ended it, and the claims
  // taken through it or its views (under the allocation's lock).
  std::atomic<const std::string *> unborrowed{nullptr};
  rig::ClaimCounts claims;
};

namespace rig {

// True iff b is a handle not NULL and not released (handles.hpp).
inline bool live_handle(const rig_buffer_t *b) { return handle_live(b, HandleType::Buffer); }
// The reason b is dead, or nullptr.
const std::string *dead_reason(const rig_buffer_t *b);
// What b admits: its memory's access, or Read for a consume's result.
rig_access_t access_of(const rig_buffer_t *b);
// Throws RIG_EINVAL while a hold takes b's memory exclusive.
void require_not_exclusive(const rig_buffer_t *b);

// Takes a claim of kind k on b's memory (RIG_EINVAL if it is held
// exclusive), and ends one where one is held.
void take_claim(rig_buffer_t *b, ClaimKind k);
void drop_claim(rig_buffer_t *b, ClaimKind k);
// A read claim, as host access, copies and submits take.
inline void claim_read(rig_buffer_t *b) { take_claim(b, ClaimKind::Read); }
inline void release_read(rig_buffer_t *b) { drop_claim(b, ClaimKind::Read); }
// A hold (Claim.hold), as a prepared submission takes on its fixed memory.
inline void take_hold(rig_buffer_t *b) { take_claim(b, ClaimKind::Hold); }
inline void end_hold(rig_buffer_t *b) { drop_claim(b, ClaimKind::Hold); }

// A read claim on a buffer's memory for the life of the object: host
// access and copies hold one.  Throws RIG_EINVAL if the memory is held
// exclusive.
class ReadClaim {
 public:
  explicit ReadClaim(rig_buffer_t *b);
  ~ReadClaim();
  ReadClaim(const ReadClaim &) = delete;
  ReadClaim &operator=(const ReadClaim &) = delete;

 private:
  rig_buffer_t *b_;
};
// loc moved on by bytes: its address, or its offset in a handle.
rig_edge_location_t advance(rig_edge_location_t loc, int64_t bytes);
// Where b's first byte lies for the work of its device.
rig_edge_location_t location_of(const rig_buffer_t *b);
// b's host address, or nullptr.
void *host_address(const rig_buffer_t *b);
// A new buffer on d over length bytes of a from offset.
rig_buffer_t *new_buffer(Allocation *a, rig_device_t *d, int64_t offset, int64_t length);
// A buffer over an io device's region (rig_buffer_of_io).
rig_buffer_t *new_io_buffer(rig_device_t *d, void *region, rig_access_t access, int64_t n);
// Moves n bytes between the io memory a, from its byte offset, and host
// memory; throws RIG_EIO naming the region, with the errno and the bytes
// moved before the failure, or with the count where the region was cut
// short.
int64_t io_move(rig_device_t *io, Allocation *a, bool write, int64_t offset, void *host, int64_t n);
// "NAME: what the library says region is" (NAME where it says nothing).
std::string io_region_name(rig_device_t *io, void *region);

}  // namespace rig
