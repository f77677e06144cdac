// A CUDA device's queues: room, grow and submit (see cuda_device.hpp).
#include "cuda_device.hpp"

#include "cuda_host_pages.hpp"

#include <algorithm>

namespace rig::cuda {
namespace {

// What the room that last answered RIG_GROW on this thread asked for: grow
// makes it (rig-edge-driver.txt, grow).
struct GrowRequest {
  const CudaDevice *device = nullptr;
  size_t events = 0;
  size_t parts = 0;
  std::vector<uintptr_t> pages;  // of other devices' words to map
};
thread_local GrowRequest grow_request;

constexpr int32_t kNoEvent = -1, kNeedsEvent = -2;

cu::DevicePtr address_of(const rig_edge_location_t &l) { return reinterpret_cast<uintptr_t>(l.address); }

uintptr_t page_of(const volatile uint64_t *word) {
  return reinterpret_cast<uintptr_t>(word) / cu::host_page_bytes() * cu::host_page_bytes();
}

// The after list's latest part on another queue than the part's, or -1:
// the events of one stream are ordered, so waiting for it waits for all.
int64_t latest_across(const rig_edge_work_t &w, uint32_t i) {
  const rig_edge_part_t &p = w.parts[i];
  int64_t latest = -1;
  for (uint32_t k = 0; k < p.after_count; k++) {
    uint32_t a = p.after[k];
    if (a < i && w.parts[a].queue != p.queue) latest = std::max<int64_t>(latest, a);
  }
  return latest;
}

}  // namespace

void CudaDevice::adopt_growth() {
  if (!grown_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> g(grown_mu_);
  grown_.store(false, std::memory_order_relaxed);
  if (grown_events_.size() > events_.size()) events_.swap(grown_events_);
  if (grown_pages_.size() > word_pages_.size()) word_pages_.swap(grown_pages_);
  if (grown_scratch_.capacity() > event_of_.capacity()) event_of_.swap(grown_scratch_);
}

bool CudaDevice::fits(const rig_edge_launch_t &l) const {
  auto *e = static_cast<const CudaEntry *>(l.entry);
  for (int i = 0; i < 3; i++)
    if (l.groups[i] > limits_.grid[i] || l.threads[i] > limits_.block[i]) return false;
  // Each axis is within its bound, so the product does not overflow.
  uint64_t threads = l.threads[0] * l.threads[1] * l.threads[2];
  return threads <= limits_.threads && threads <= static_cast<uint64_t>(e->max_threads) &&
         l.shared_bytes <= static_cast<uint64_t>(e->max_dynamic_shared) && l.param_bytes <= limits_.param_bytes &&
         (e->param_bytes < 0 || l.param_bytes >= static_cast<uint64_t>(e->param_bytes));
}

rig_edge_room_t CudaDevice::room(const rig_edge_work_t &w) {
  adopt_growth();
  size_t crossings = 0;
  for (uint32_t i = 0; i < w.part_count; i++) {
    const rig_edge_part_t &p = w.parts[i];
    if (p.queue > kCopyQueue || (p.kind == RIG_PART_LAUNCH && !fits(p.u.launch))) return RIG_NEVER;
    for (uint32_t k = 0; k < p.after_count; k++)
      if (p.after[k] < i && w.parts[p.after[k]].queue != p.queue) crossings++;
  }
  // A start and an end event for a value with copies, and one per part
  // that a part on the other stream follows.
  size_t events = 2 + std::min<size_t>(crossings, w.part_count);
  bool grow = events > events_.size() || w.part_count > event_of_.capacity();
  GrowRequest &request = grow_request;
  request.pages.clear();
  for (uint32_t k = 0; k < w.wait_count; k++) {
    uintptr_t page = page_of(w.waits[k].word);
    auto here = [&](const WordPage &m) { return m.page == page; };
    bool mapped = std::any_of(word_pages_.begin(), word_pages_.end(), here);
    if (!mapped) {
      request.pages.push_back(page);
      grow = true;
    }
  }
  if (!grow) return RIG_ROOM;
  request.device = this;
  request.events = events;
  request.parts = w.part_count;
  return RIG_GROW;
}

std::optional<int64_t> CudaDevice::grow() {
  GrowRequest &request = grow_request;
  if (request.device != this) return std::nullopt;
  auto scope = current();
  std::lock_guard<std::mutex> g(grown_mu_);
  while (all_events_.size() < request.events) {
    cu::Event e;
    cu::Result r = api_.cuEventCreate(&e, cu::kEventDisableTiming);
    if (r == cu::kErrorOutOfMemory) return int64_t{64};  // CUDA does not say; an event's host record
    check(r, "cuEventCreate");
    all_events_.push_back(e);
  }
  for (uintptr_t page : request.pages) {
    if (std::any_of(all_pages_.begin(), all_pages_.end(), [&](const WordPage &m) { return m.page == page; })) continue;
    std::string why;
    std::optional<cu::DevicePtr> address =
        cu::hold_host_pages(api_, reinterpret_cast<void *>(page), cu::host_page_bytes(), &why);
    if (!address) {
      if (cu::Result r = work_error(); cu::breaks_context(r)) fail("cuMemHostRegister", r);
      return static_cast<int64_t>(cu::host_page_bytes());
    }
    all_pages_.push_back({page, *address});  // held for the life of the process
  }
  grown_events_ = all_events_;
  grown_pages_ = all_pages_;
  if (grown_scratch_.capacity() < request.parts) {
    std::vector<int32_t> scratch;
    scratch.reserve(std::max<size_t>(request.parts, 2 * grown_scratch_.capacity()));
    grown_scratch_.swap(scratch);
  }
  grown_.store(true, std::memory_order_release);
  request.device = nullptr;
  return std::nullopt;
}

cu::DevicePtr CudaDevice::mapped_word(const volatile uint64_t *word) const {
  uintptr_t page = page_of(word);
  for (const WordPage &m : word_pages_)
    if (m.page == page) return m.device + (reinterpret_cast<uintptr_t>(word) - page);
  throw Fault("a wait's word is not mapped for the device");  // room maps each first
}

void CudaDevice::submit(const rig_edge_work_t &w) {
  std::lock_guard<std::mutex> g(queue_mu_);
  if (stopped_.load()) throw Fault("the device has stopped");
  raise_recorded_fault();
  auto scope = current();
  for (uint32_t k = 0; k < w.wait_count; k++)
    check(api_.cuStreamWaitValue64(compute_, mapped_word(w.waits[k].word), w.waits[k].value, cu::kStreamWaitValueGeq),
          "cuStreamWaitValue64");
  auto on_copy_stream = [](const rig_edge_part_t &p) { return p.queue == kCopyQueue; };
  bool copies = std::any_of(w.parts, w.parts + w.part_count, on_copy_stream);
  size_t next = 0;
  // The copy stream starts the value after every lower value's work, on
  // both streams, and after the waits: it joins the compute stream where
  // that holds work it does not follow yet.
  compute_ahead_ = compute_ahead_ || w.wait_count > 0;
  if (copies && compute_ahead_) {
    check(api_.cuEventRecord(events_[next], compute_), "cuEventRecord");
    check(api_.cuStreamWaitEvent(copy_, events_[next++], 0), "cuStreamWaitEvent");
    compute_ahead_ = false;
  }
  event_of_.assign(w.part_count, kNoEvent);  // within the capacity room saw
  for (uint32_t i = 0; i < w.part_count; i++)
    if (int64_t a = latest_across(w, i); a >= 0) event_of_[static_cast<size_t>(a)] = kNeedsEvent;
  for (uint32_t i = 0; i < w.part_count; i++) {
    const rig_edge_part_t &p = w.parts[i];
    cu::Stream stream = stream_of(p.queue);
    compute_ahead_ = compute_ahead_ || stream == compute_;
    if (int64_t a = latest_across(w, i); a >= 0)
      check(api_.cuStreamWaitEvent(stream, events_[static_cast<size_t>(event_of_[static_cast<size_t>(a)])], 0),
            "cuStreamWaitEvent");
    enqueue(p, stream);
    if (event_of_[i] == kNeedsEvent) {
      event_of_[i] = static_cast<int32_t>(next);
      check(api_.cuEventRecord(events_[next++], stream), "cuEventRecord");
    }
  }
  // The value is done once the copy stream's part has joined the compute
  // stream's: the compute stream then writes the word, after a fence that
  // makes the work's writes visible first.
  if (copies) {
    check(api_.cuEventRecord(events_[next], copy_), "cuEventRecord");
    check(api_.cuStreamWaitEvent(compute_, events_[next++], 0), "cuStreamWaitEvent");
  }
  check(api_.cuStreamWriteValue64(compute_, word_region_->address, w.value, cu::kStreamWriteValueDefault),
        "cuStreamWriteValue64");
}

void CudaDevice::enqueue(const rig_edge_part_t &part, cu::Stream stream) {
  switch (part.kind) {
    case RIG_PART_COPY: {
      const rig_edge_copy_t &c = part.u.copy;
      cu::DevicePtr src = address_of(c.src), dst = address_of(c.dst);
      if (c.width == 0 || c.rows == 0) return;
      if (c.rows == 1 || (c.src_pitch == c.width && c.dst_pitch == c.width)) {
        check(api_.cuMemcpyAsync(dst, src, c.width * c.rows, stream), "cuMemcpyAsync");
      } else if (c.src_pitch <= limits_.pitch && c.dst_pitch <= limits_.pitch) {
        cu::Memcpy2D m{};
        m.srcMemoryType = m.dstMemoryType = cu::kMemoryTypeUnified;
        m.srcDevice = src;
        m.srcPitch = c.src_pitch;
        m.dstDevice = dst;
        m.dstPitch = c.dst_pitch;
        m.WidthInBytes = c.width;
        m.Height = c.rows;
        check(api_.cuMemcpy2DAsync(&m, stream), "cuMemcpy2DAsync");
      } else {
        for (uint64_t r = 0; r < c.rows; r++)  // pitches past a 2D copy's bound
          check(api_.cuMemcpyAsync(dst + r * c.dst_pitch, src + r * c.src_pitch, c.width, stream), "cuMemcpyAsync");
      }
      return;
    }
    case RIG_PART_FILL:
      if (part.u.fill.bytes > 0)
        check(api_.cuMemsetD8Async(address_of(part.u.fill.dst), part.u.fill.value, part.u.fill.bytes, stream),
              "cuMemsetD8Async");
      return;
    case RIG_PART_WORDS:
      enqueue_words(part.u.words, stream);
      return;
    case RIG_PART_LAUNCH: {
      const rig_edge_launch_t &l = part.u.launch;
      auto *e = static_cast<const CudaEntry *>(l.entry);
      // The function's own parameters where CUDA states their bytes: a
      // launch's block may run past them (room refuses one that falls short).
      size_t bytes = e->param_bytes >= 0 ? static_cast<size_t>(e->param_bytes) : l.param_bytes;
      void *extra[] = {reinterpret_cast<void *>(uintptr_t{cu::kLaunchParamBufferPointer}), const_cast<void *>(l.params),
                       reinterpret_cast<void *>(uintptr_t{cu::kLaunchParamBufferSize}), &bytes,
                       reinterpret_cast<void *>(uintptr_t{cu::kLaunchParamEnd})};
      check(api_.cuLaunchKernel(e->function, static_cast<unsigned>(l.groups[0]), static_cast<unsigned>(l.groups[1]),
                                static_cast<unsigned>(l.groups[2]), static_cast<unsigned>(l.threads[0]),
                                static_cast<unsigned>(l.threads[1]), static_cast<unsigned>(l.threads[2]),
                                static_cast<unsigned>(l.shared_bytes), stream, nullptr, bytes > 0 ? extra : nullptr),
            "cuLaunchKernel");
      return;
    }
  }
  throw Fault("a part of an unknown kind");
}

void CudaDevice::enqueue_words(const rig_edge_words_t &words, cu::Stream stream) {
  for (uint32_t k = 0; k < words.count; k++) {
    cu::DevicePtr at = address_of(words.writes[k].dst);
    uint64_t value = words.writes[k].value;
    if (at % 8 == 0) {
      check(api_.cuStreamWriteValue64(stream, at, value, cu::kStreamWriteValueDefault), "cuStreamWriteValue64");
    } else if (at % 4 == 0) {  // little-endian halves, in order
      check(api_.cuStreamWriteValue32(stream, at, static_cast<uint32_t>(value), cu::kStreamWriteValueDefault),
            "cuStreamWriteValue32");
      check(api_.cuStreamWriteValue32(stream, at + 4, static_cast<uint32_t>(value >> 32), cu::kStreamWriteValueDefault),
            "cuStreamWriteValue32");
    } else {
      for (int b = 0; b < 8; b++)
        check(api_.cuMemsetD8Async(at + b, static_cast<unsigned char>(value >> (8 * b)), 1, stream), "cuMemsetD8Async");
    }
  }
}

}  // namespace rig::cuda
