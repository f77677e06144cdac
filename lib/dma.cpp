// DMA descriptions: how another PCI function reaches a buffer's memory.
#include "buffer.hpp"

#include <deque>
#include <mutex>

using namespace rig;

namespace {

// Bus ranges hold until the process exits: kept here for its life.
const rig_dma_range_t *keep_ranges(std::vector<rig_dma_range_t> ranges) {
  static std::mutex mu;
  static auto *kept = new std::deque<std::vector<rig_dma_range_t>>();
  std::lock_guard<std::mutex> g(mu);
  kept->push_back(std::move(ranges));
  return kept->back().data();
}

}  // namespace

extern "C" rig_status_t rig_buffer_dma(rig_buffer_t *b, const char *fn, rig_dma_t *out) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(out != nullptr && out->size >= sizeof(rig_dma_t), "out is NULL or its size is too small");
    require(fn != nullptr, "the PCI function is NULL");
    require_buffer(b, "the buffer");
    require(b->length > 0, "the buffer is empty");
    Allocation *a = b->alloc;
    rig_device_t *owner = a->owner;
    require(!owner->is_host && !owner->facts.runs_on_host && !owner->is_io() && a->region,
            "the host's, a memory device's and an io device's memory have no DMA description");
    require_not_exclusive(b);
    require_live(owner);
    // Out of the claims for good, whatever the driver answers.
    a->outside_claims.store(true);
    auto answer = driver_call(owner, true, [&] { return owner->drv->dma(a->region, fn); });
    if (auto *why = std::get_if<std::string>(&answer)) throw Error(RIG_EOPEN, owner->name + ": " + *why);
    auto &dma = std::get<DriverDevice::Dma>(answer);
    out->kind = dma.kind;
    out->range_count = dma.ranges.size();
    out->ranges = dma.ranges.empty() ? nullptr : keep_ranges(std::move(dma.ranges));
    out->fd = dma.fd;
    out->offset = dma.offset;
    out->start = b->offset;
    return RIG_OK;
  });
}
