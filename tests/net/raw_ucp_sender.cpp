// A peer of the link on UCX itself (raw_ucp_sender.hpp).
#include "raw_ucp_sender.hpp"

#include <criterion/criterion.h>

#include <cstring>
#include <thread>
#include <vector>

#include "ucx_address.hpp"
#include "ucx_arrival.hpp"
#include "ucx_core.hpp"

namespace rig::net::test {

namespace {

// The agent's messages and heartbeats, which the sender drops.
ucs_status_t drop(void *, const void *, size_t, void *, size_t, const ucp_am_recv_param_t *) { return UCS_OK; }

}  // namespace

RawUcpSender::RawUcpSender(const std::string &address) {
  ucp_config_t *config = nullptr;
  cr_assert(ucp_config_read(nullptr, nullptr, &config) == UCS_OK);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM;
  const ucs_status_t initialised = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  cr_assert(initialised == UCS_OK, "ucp_init: %s", ucs_status_string(initialised));
  ucp_worker_params_t worker{};
  worker.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker.thread_mode = UCS_THREAD_MODE_SINGLE;
  cr_assert(ucp_worker_create(context_, &worker, &worker_) == UCS_OK);
  for (unsigned id : {detail::kUcxMessageAm, detail::kUcxHeartbeatAm}) {
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
    handler.id = id;
    handler.cb = &drop;
    cr_assert(ucp_worker_set_am_recv_handler(worker_, &handler) == UCS_OK);
  }
  auto resolved = detail::ucx_resolve(address, false);
  cr_assert(resolved.ok(), "%s", resolved.message().c_str());
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  ep.sockaddr.addr = reinterpret_cast<const sockaddr *>(&resolved.value().storage);
  ep.sockaddr.addrlen = resolved.value().length;
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = &on_error;
  ep.err_handler.arg = this;
  cr_assert(ucp_ep_create(worker_, &ep, &ep_) == UCS_OK, "cannot connect to %s", address.c_str());
}

RawUcpSender::~RawUcpSender() {
  if (ep_) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucp_ep_close_nbx(ep_, &param);
    if (UCS_PTR_IS_PTR(request)) {
      while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker_);
      ucp_request_free(request);
    }
  }
  if (worker_) ucp_worker_destroy(worker_);
  if (context_) ucp_cleanup(context_);
}

void RawUcpSender::on_error(void *arg, ucp_ep_h, ucs_status_t) { static_cast<RawUcpSender *>(arg)->failed_ = true; }

bool RawUcpSender::send_all(uint16_t id, std::span<const Framed> messages, std::chrono::milliseconds between) {
  std::vector<std::vector<std::byte>> frames;  // UCX reads each until its send completes
  frames.reserve(messages.size());
  std::vector<void *> requests;
  bool posted = true;
  for (const Framed &m : messages) {
    std::vector<std::byte> &frame = frames.emplace_back(detail::kUcxFrameBytes);
    std::memcpy(frame.data(), &m.seq, sizeof m.seq);
    std::memcpy(frame.data() + sizeof m.seq, &id, sizeof id);
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_AM_SEND_FLAG_REPLY;
    ucs_status_ptr_t request =
        ucp_am_send_nbx(ep_, detail::kUcxMessageAm, frame.data(), frame.size(), m.data.data(), m.data.size(), &param);
    if (UCS_PTR_IS_ERR(request)) {
      posted = false;
      break;
    }
    if (UCS_PTR_IS_PTR(request)) requests.push_back(request);
    if (&m != &messages.back()) std::this_thread::sleep_for(between);
  }
  bool completed = posted;
  for (void *request : requests) {
    ucs_status_t status;
    while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS && !failed_) ucp_worker_progress(worker_);
    ucp_request_free(request);
    completed = completed && status == UCS_OK;
  }
  return completed && !failed_;
}

bool RawUcpSender::closed(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!failed_ && std::chrono::steady_clock::now() < deadline) {
    if (ucp_worker_progress(worker_) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return failed_;
}

}  // namespace rig::net::test
