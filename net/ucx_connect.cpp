// Listening and connecting (ucx_listener.hpp, UcxLink::connect), both
// over UCX's client-server sockaddr connections.
#include <chrono>
#include <thread>
#include <sys/socket.h>

#include "ucx_address.hpp"
#include "ucx_core.hpp"
#include "ucx_request.hpp"

namespace rig::net {
namespace {

ucp_ep_params_t endpoint_params(detail::UcxCore *core) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &detail::UcxCore::on_error;
  params.err_handler.arg = core;
  return params;
}

void on_connection(ucp_conn_request_h request, void *arg) {
  auto *state = static_cast<UcxListener::State *>(arg);
  if (auto core = state->core.lock()) core->queue_connection(state, request);
}

}  // namespace

UcxResult<std::unique_ptr<UcxListener>> UcxListener::create(const std::shared_ptr<detail::UcxCore> &core,
                                                             const std::string &address, UcxAcceptHandler accept) {
  UcxResult<detail::UcxSocketAddress> resolved = detail::ucx_resolve(address, true);
  if (!resolved.ok()) return resolved.status();
  auto state = std::make_shared<State>();
  state->core = core;
  state->accept = std::move(accept);
  ucp_listener_params_t params{};
  params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr *>(&resolved.value().storage);
  params.sockaddr.addrlen = resolved.value().length;
  params.conn_handler.cb = &on_connection;
  params.conn_handler.arg = state.get();
  ucp_listener_h listener = nullptr;
  ucs_status_t status = ucp_listener_create(core->worker(), &params, &listener);
  if (status != UCS_OK) return UcxStatus::failure("listening on " + address + " failed: " + ucs_status_string(status));
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  status = ucp_listener_query(listener, &attr);
  if (status != UCS_OK) {
    ucp_listener_destroy(listener);
    return UcxStatus::failure("listening on " + address + " failed, asking its port: " + ucs_status_string(status));
  }
  state->listener = listener;
  core->keep_listener(state);
  const std::string bound = detail::ucx_address_text(reinterpret_cast<const sockaddr *>(&attr.sockaddr));
  const uint16_t port = static_cast<uint16_t>(std::stoul(bound.substr(bound.rfind(':') + 1)));
  return std::unique_ptr<UcxListener>(new UcxListener(std::move(state), port, bound));
}

UcxListener::~UcxListener() { stop(*state_); }

void UcxListener::stop(State &state) {
  std::lock_guard lock(state.mutex);
  if (state.listener) ucp_listener_destroy(state.listener);
  state.listener = nullptr;
}

namespace detail {

void UcxCore::accept(UcxListener::State *listener, ucp_conn_request_h request) {
  std::lock_guard lock(listener->mutex);
  if (!listener->listener) return;  // destroyed meanwhile: UCX dropped the request
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  const std::string peer = ucp_conn_request_query(request, &attr) == UCS_OK
                               ? ucx_address_text(reinterpret_cast<const sockaddr *>(&attr.client_address))
                               : std::string("an unknown client");
  ucp_ep_params_t params = endpoint_params(this);
  params.field_mask |= UCP_EP_PARAM_FIELD_CONN_REQUEST;
  params.conn_request = request;
  ucp_ep_h ep = nullptr;
  if (ucp_ep_create(worker_, &params, &ep) != UCS_OK) return;  // UCX rejects the request itself
  auto endpoint = std::make_shared<UcxEndpoint>(UcxEndpoint::Passkey{}, shared_from_this(), ep, peer);
  add_endpoint(endpoint, ep);
  if (!listener->accept) return;
  try {
    listener->accept(std::move(endpoint));
  } catch (...) {
    // The owner's handler; without the endpoint the connection closes.
  }
}

}  // namespace detail

UcxResult<std::unique_ptr<UcxListener>> UcxLink::listen(const std::string &address, UcxAcceptHandler accept) {
  return UcxListener::create(core_, address, std::move(accept));
}

UcxResult<std::shared_ptr<UcxEndpoint>> UcxLink::connect(const std::string &address) {
  UcxResult<detail::UcxSocketAddress> resolved = detail::ucx_resolve(address, false);
  if (!resolved.ok()) return resolved.status();
  if (core_->on_progress_thread())
    return UcxStatus::failure("connecting to " + address + " cannot wait on the link's progress thread");
  ucp_ep_params_t params = endpoint_params(core_.get());
  params.field_mask |= UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_FLAGS;
  params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr *>(&resolved.value().storage);
  params.sockaddr.addrlen = resolved.value().length;
  ucp_ep_h ep = nullptr;
  core_->begin_connect();
  const ucs_status_t status = ucp_ep_create(core_->worker(), &params, &ep);
  if (status != UCS_OK) {
    core_->end_connect();
    return UcxStatus::failure("connecting to " + address + " failed: " + ucs_status_string(status));
  }
  auto endpoint = std::make_shared<UcxEndpoint>(UcxEndpoint::Passkey{}, core_, ep, address);
  core_->add_endpoint(endpoint, ep);
  core_->end_connect();

  // The flush completes once the connection is up, or fails with it.
  detail::UcxWaiter waiter;
  {
    std::lock_guard lock(endpoint->send_mutex_);
    const ucp_request_param_t flush = waiter.param();
    waiter.posted(endpoint->ep_ ? ucp_ep_flush_nbx(endpoint->ep_, &flush) : UCS_STATUS_PTR(UCS_ERR_CANCELED));
  }
  if (waiter.pending()) core_->wake();
  const auto deadline = std::chrono::steady_clock::now() + core_->options().failure_bound;
  if (!waiter.wait_until(deadline))
    endpoint->fail(UCS_ERR_ENDPOINT_TIMEOUT, "(no answer in " + std::to_string(core_->options().failure_bound.count()) +
                                                 " ms)");
  const ucs_status_t flushed = waiter.wait();
  if (flushed == UCS_OK && !endpoint->failed()) return endpoint;
  // The flush ends first (UCS_ERR_NOT_CONNECTED); UCX's error callback,
  // just after it, has the reason.
  const auto reason_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!endpoint->failed() && std::chrono::steady_clock::now() < reason_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string reason = endpoint->failure();
  const std::string prefix = "the link to " + address + " failed: ";
  if (reason.rfind(prefix, 0) == 0) reason = reason.substr(prefix.size());
  if (reason.empty()) reason = ucs_status_string(flushed);
  return UcxStatus::failure("connecting to " + address + " failed: " + reason);
}

}  // namespace rig::net
