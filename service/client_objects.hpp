// The memory rigd holds for one client, by handle, within its quota.
#pragma once

#include "account.hpp"
#include "client_counters.hpp"
#include "served.hpp"
#include "shared_rows.hpp"

#include <rig/rig.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace rigd {

// What a buffer holds: the instances it needs open, the one whose memory
// it is (empty for a served device's own memory and host memory) and the
// one it is mapped on where that is another (a borrow); the slot of its
// allocation's row of the shared-buffer table, which holds a row once the
// memory is exported or where it is an import; and the served device
// whose memory (its own or an instance's) the client may export through
// it, no_export for a borrow on another proxy's instance or host memory.
struct ObjectHolds {
  static constexpr size_t no_export = SIZE_MAX;
  std::shared_ptr<Instance> memory, mapped_on;
  std::shared_ptr<RowSlot> rows;
  size_t exports = no_export;
};

class ClientObjects {
 public:
  // account counts what the client holds, which must outlive the objects,
  // as must counters, where given: its uses' bytes count the device
  // memory of each served device the objects hold.
  explicit ClientObjects(Account &account, ClientCounters *counters = nullptr) noexcept
      : account_(account), counters_(counters) {}
  // Releases every buffer: rig frees each once the work using it is done.
  ~ClientObjects();
  ClientObjects(const ClientObjects &) = delete;
  ClientObjects &operator=(const ClientObjects &) = delete;

  // Counts bytes more of kind (device memory: buffers, imports, images;
  // or host arenas) in the client's account, and answers "", or answers
  // why not (the limit's key and numbers); refund gives them back.
  std::string charge(int64_t bytes, Held kind = Held::device_bytes) { return account_.take(kind, bytes); }
  void refund(int64_t bytes, Held kind = Held::device_bytes) noexcept { account_.give(kind, bytes); }
  // charge, and one entry of the table (Held::handles) for the handle add
  // then makes: both or neither.  refund_entry gives both back where no
  // handle is made after all.
  std::string charge_entry(int64_t bytes, Held kind = Held::device_bytes);
  void refund_entry(int64_t bytes, Held kind = Held::device_bytes) noexcept;
  Account &account() noexcept { return account_; }

  using Holds = ObjectHolds;
  static constexpr size_t no_export = ObjectHolds::no_export;

  // Takes the caller's reference to buffer and answers its new handle;
  // counted bytes of kind and its entry, which charge_entry counted, are
  // refunded as the handle is removed, and what it holds stays until then.
  // Memory of its own allocation (no rows given) gets a slot of its own.
  uint64_t add(rig_buffer_t *buffer, int64_t counted, Holds holds = {}, Held kind = Held::device_bytes);

  // A new reference to the handle's buffer, or NULL for no such handle;
  // holds, if not NULL, gets what it holds.
  rig_buffer_t *get(uint64_t handle, Holds *holds = nullptr) const;
  // The same, with only the handle's row (NULL where it has none): a
  // hand-over's parts need no more.
  rig_buffer_t *get(uint64_t handle, std::shared_ptr<SharedRow> *row) const;

  // The handle's row of the shared-buffer table (its allocation's), which
  // rows gives where it has none yet (exports_.new_row); NULL where it has
  // none and gets none.
  std::shared_ptr<SharedRow> row_of(uint64_t handle, const std::function<std::shared_ptr<SharedRow>()> &rows);

  // Releases the handle's buffer; false for no such handle.
  bool remove(uint64_t handle);

 private:
  struct Object {
    rig_buffer_t *buffer;
    int64_t counted;
    Held kind;
    Holds holds;
  };
  // The use counters of the served device whose memory o counts, or NULL
  // where it counts none (a host arena, a mapping).
  UseCounters *use_of(const Object &o) const noexcept;
  // Moves the bytes of o's served device's use by its count, up or down.
  void count(const Object &o, bool up) const noexcept;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Object> held_;
  uint64_t next_ = 1;  // handle 0 names nothing
  Account &account_;
  ClientCounters *counters_;
};

}  // namespace rigd
