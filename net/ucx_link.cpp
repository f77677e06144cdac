#include "ucx_link.hpp"

#include "ucx_core.hpp"
#include "ucx_memory.hpp"

namespace rig::net {

UcxResult<std::unique_ptr<UcxLink>> UcxLink::create(const UcxOptions &options) {
  UcxResult<std::shared_ptr<detail::UcxCore>> core = detail::UcxCore::create(options);
  if (!core.ok()) return core.status();
  return std::unique_ptr<UcxLink>(new UcxLink(std::move(core.value())));
}

UcxLink::UcxLink(std::shared_ptr<detail::UcxCore> core) : core_(std::move(core)) {}

UcxLink::~UcxLink() { core_->shutdown(); }

void UcxLink::on_message(uint16_t id, UcxHandler handler) { core_->set_handler(id, std::move(handler)); }

UcxResult<std::unique_ptr<UcxMemory>> UcxLink::map(void *base, size_t length) {
  return UcxMemory::create(core_, base, length);
}

pid_t UcxLink::progress_thread_id() const { return core_->progress_thread_id(); }

}  // namespace rig::net
