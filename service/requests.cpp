// The requests of a client's submission ring (requests.hpp).
#include "requests.hpp"

#include "handover.hpp"

#include <cstdint>

namespace rigd {

rig_proxy_completion Requests::handle(const rig_proxy_entry &entry) {
  rig_proxy_completion answer{};
  answer.tag = entry.tag;
  answer.status = RIG_EINVAL;
  if (entry.flags != 0 || entry.reserved != 0) return answer;
  bool on_proxy = entry.device < proxies_.size();
  switch (entry.opcode) {
    case RIG_PROXY_OP_NOP:
      answer.status = RIG_OK;
      answer.value = entry.args[0];
      break;
    case RIG_PROXY_OP_OPEN:
      answer.status = open(entry, answer);
      break;
    case RIG_PROXY_OP_ALLOC:
      if (on_proxy) answer.status = alloc(entry, answer);
      break;
    case RIG_PROXY_OP_FREE:
      if (objects_.remove(entry.args[0])) answer.status = RIG_OK;
      break;
    case RIG_PROXY_OP_HANDOVER:
      if (on_proxy) answer.status = hand_over(entry);
      break;
    case RIG_PROXY_OP_MAP_PEER:
      if (on_proxy) answer.status = map_peer(entry, answer);
      break;
    case RIG_PROXY_OP_EXPORT:
      if (on_proxy) answer.status = export_bytes(entry, answer);
      break;
    case RIG_PROXY_OP_IMPORT:
      if (on_proxy) answer.status = import_bytes(entry, answer);
      break;
    case RIG_PROXY_OP_ALLOCATED:
      if (entry.device < served_.size()) {
        answer.status = RIG_OK;
        answer.value = static_cast<uint64_t>(rig_allocated(served_.device(entry.device)));
      }
      break;
    default:
      break;
  }
  return answer;
}

rig_status_t Requests::open(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  if (entry.device >= served_.size()) return RIG_EINVAL;
  if (proxies_.size() == proxy_limit_) return RIG_EOPEN;
  // Values past 2^47 are beyond any timeline's (rig_point_t).
  if (entry.args[0] >= uint64_t{1} << 47) return RIG_EINVAL;
  auto proxy = static_cast<uint32_t>(proxies_.size());
  answer.value = proxy;
  proxies_.push_back({entry.device, entry.args[0]});
  completions_.start(proxy, entry.args[0]);
  return RIG_OK;
}

rig_status_t Requests::alloc(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  uint64_t kind = entry.args[0], bytes = entry.args[1];
  if (kind > RIG_MEMORY_MAPPED || bytes == 0 || bytes > INT64_MAX) return RIG_EINVAL;
  if (!objects_.fits(static_cast<int64_t>(bytes))) {
    answer.detail = bytes;
    return RIG_ENOMEM;
  }
  rig_buffer_t *b = nullptr;
  rig_status_t status = rig_buffer_create(served_.device(proxies_[entry.device].device), static_cast<int64_t>(bytes),
                                          static_cast<rig_memory_t>(kind), &b);
  if (status == RIG_ENOMEM) answer.detail = bytes;
  if (status != RIG_OK) return status;
  answer.value = objects_.add(b, static_cast<int64_t>(bytes));
  return RIG_OK;
}

rig_status_t Requests::map_peer(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  rig_buffer_t *memory = objects_.get(entry.args[0]);
  if (!memory) return RIG_EINVAL;
  rig_buffer_t *mapped = nullptr;
  rig_status_t status = rig_buffer_borrow(served_.device(proxies_[entry.device].device), memory, &mapped);
  rig_buffer_unref(memory);
  // A borrow that cannot map answers RIG_OK and no buffer: handle 0.
  if (status == RIG_OK && mapped) answer.value = objects_.add(mapped, 0);
  return status;
}

rig_status_t Requests::hand_over(const rig_proxy_entry &entry) {
  uint32_t proxy = entry.device;
  Proxy &p = proxies_[proxy];
  if (entry.args[0] != p.handed + 1) return RIG_EINVAL;
  auto work = read_handover(payload_, entry.payload_offset, entry.payload_bytes);
  if (!work) return RIG_EINVAL;
  // The value follows the proxy's earlier values and the values it waits for.
  std::vector<rig_point_t> waits = completions_.pending(proxy, p.handed);
  for (const rig_proxy_wait &w : work->waits) {
    if (w.reserved != 0 || w.proxy >= proxies_.size() || w.value > proxies_[w.proxy].handed) return RIG_EINVAL;
    auto points = completions_.pending(w.proxy, w.value);
    waits.insert(waits.end(), points.begin(), points.end());
  }
  HeldParts parts;
  if (!hold_parts(objects_, work->parts, parts)) return RIG_EINVAL;
  // From here the value is the proxy's: work that fails to start fails it.
  p.handed = entry.args[0];
  std::vector<rig_point_t> points;
  rig_status_t status = submit_parts(parts, waits, points);
  // A value that failed to start marks the word lost first, so that its
  // started parts, once done, do not raise it.
  if (status != RIG_OK) completions_.fail(proxy);
  // A value is done once what it waits for is too: a value of no parts, or
  // whose parts rig ran at once, waits on other devices all the same.
  points.insert(points.end(), waits.begin(), waits.end());
  completions_.expect(proxy, p.device, p.handed, std::move(points), std::move(work->waits));
  return status;
}

}  // namespace rigd

namespace rigd {

rig_status_t Requests::export_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  size_t device = proxies_[entry.device].device;
  rig_buffer_t *whole = objects_.get(entry.args[0]);
  if (!whole) return RIG_EINVAL;
  uint64_t offset = entry.args[1], length = entry.args[2], size = static_cast<uint64_t>(rig_buffer_bytes(whole));
  rig_buffer_t *view = nullptr;
  // Only memory of the proxy's served device: a host arena is the client's.
  if (rig_buffer_device(whole) == served_.device(device) && offset <= size && length <= size - offset)
    rig_buffer_view(whole, static_cast<int64_t>(offset), static_cast<int64_t>(length), &view);
  rig_buffer_unref(whole);
  if (!view) return RIG_EINVAL;
  answer.value = exports_.add(client_, device, view);
  return RIG_OK;
}

rig_status_t Requests::import_bytes(const rig_proxy_entry &entry, rig_proxy_completion &answer) {
  rig_buffer_t *view = exports_.get(entry.args[0], proxies_[entry.device].device);
  if (!view) return RIG_EINVAL;
  answer.detail = static_cast<uint64_t>(rig_buffer_bytes(view));
  // The exporter's quota counts the memory.
  answer.value = objects_.add(view, 0);
  return RIG_OK;
}

}  // namespace rigd
