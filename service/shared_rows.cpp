// The rows of the shared-buffer table (shared_rows.hpp).
#include "shared_rows.hpp"

#include <atomic>

namespace rigd {

namespace {

uint64_t load(uint64_t &word) { return std::atomic_ref<uint64_t>(word).load(std::memory_order_relaxed); }
void publish(uint64_t &word, uint64_t value) { std::atomic_ref<uint64_t>(word).store(value, std::memory_order_release); }

}  // namespace

SharedRow::SharedRow(SharedRows &rows, uint32_t index, rig_proxy_shared_row *words) noexcept
    : rows_(rows), index_(index), words_(words), taken_(load(words->taken)), done_(load(words->done)) {}

SharedRow::~SharedRow() { rows_.give_back(index_); }

uint64_t SharedRow::take() {
  std::lock_guard g(mu_);
  publish(words_->taken, ++taken_);
  return taken_;
}

void SharedRow::finish(uint64_t n) {
  std::lock_guard g(mu_);
  ended_.insert(n);
  while (!ended_.empty() && *ended_.begin() == done_ + 1) {
    ended_.erase(ended_.begin());
    ++done_;
  }
  publish(words_->done, done_);
}

SharedRows::SharedRows(const ServedDevices &served) : served_(served) {
  for (uint32_t r = served.shared_rows(); r-- > 0;) free_.push_back(r);
}

std::shared_ptr<SharedRow> SharedRows::take() {
  std::lock_guard g(mu_);
  if (free_.empty()) return nullptr;
  uint32_t r = free_.back();
  free_.pop_back();
  return std::make_shared<SharedRow>(*this, r, served_.shared_row(r));
}

void SharedRows::give_back(uint32_t index) {
  std::lock_guard g(mu_);
  free_.push_back(index);
}

std::shared_ptr<SharedRow> RowSlot::row() const {
  if (!has_row_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard g(mu_);
  return row_;
}

std::shared_ptr<SharedRow> RowSlot::row_or(const std::function<std::shared_ptr<SharedRow>()> &make) {
  std::lock_guard g(mu_);
  if (!row_) {
    row_ = make();
    has_row_.store(row_ != nullptr, std::memory_order_release);
  }
  return row_;
}

}  // namespace rigd
