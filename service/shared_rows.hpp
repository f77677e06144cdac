// The rows of the shared-buffer table (protocol.h, rig_proxy_shared_row):
// for each exported handle, the hand-overs of every client that touch it,
// counted as rigd takes them and as their work ends, so that a client waits
// for other clients' work on shared memory by reading the row.
#pragma once

#include "served.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace rigd {

class SharedRows;

// One row while an export, its imports or work on them hold it.
class SharedRow {
 public:
  SharedRow(SharedRows &rows, uint32_t index, rig_proxy_shared_row *words) noexcept;
  ~SharedRow();  // gives the row back to the table
  SharedRow(const SharedRow &) = delete;
  SharedRow &operator=(const SharedRow &) = delete;

  uint32_t index() const noexcept { return index_; }
  // Counts a hand-over rigd takes and answers its number.
  uint64_t take();
  // Hand-over n's work ended: done moves past every ended one in order.
  void finish(uint64_t n);

 private:
  SharedRows &rows_;
  uint32_t index_;
  rig_proxy_shared_row *words_;
  std::mutex mu_;
  uint64_t taken_, done_;       // as published: they go on from the row's last use
  std::set<uint64_t> ended_;    // ended past done_
};

// The table's free rows.
class SharedRows {
 public:
  explicit SharedRows(const ServedDevices &served);
  // A free row, or NULL where every row is held.
  std::shared_ptr<SharedRow> take();

 private:
  friend class SharedRow;
  void give_back(uint32_t index);

  const ServedDevices &served_;
  std::mutex mu_;
  std::vector<uint32_t> free_;
};

// The row of one allocation's handles in a client, shared by the handle it
// was allocated or imported as and its mappings (MAP_PEER): none until the
// memory is exported, then the export's, so that work through any of them
// counts there, mappings made before the export included.
class RowSlot {
 public:
  RowSlot() = default;
  explicit RowSlot(std::shared_ptr<SharedRow> row) noexcept : has_row_(row != nullptr), row_(std::move(row)) {}
  RowSlot(const RowSlot &) = delete;
  RowSlot &operator=(const RowSlot &) = delete;

  // The row, or NULL where the memory has none: then without a lock, since
  // a hand-over asks for each part's.
  std::shared_ptr<SharedRow> row() const;
  // The row, which make gives where there is none yet; NULL where make
  // gives none.
  std::shared_ptr<SharedRow> row_or(const std::function<std::shared_ptr<SharedRow>()> &make);

 private:
  std::atomic<bool> has_row_{false};  // set once row_ is, never cleared
  mutable std::mutex mu_;
  std::shared_ptr<SharedRow> row_;
};

// The rows a value's hand-over touched, each with its number there.
using TouchedRows = std::vector<std::pair<std::shared_ptr<SharedRow>, uint64_t>>;

}  // namespace rigd
