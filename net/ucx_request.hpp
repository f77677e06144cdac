// Waiting on one UCX request from a thread other than the progress thread
// (ucx_core.hpp), which completes it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <ucp/api/ucp.h>

namespace rig::net::detail {

class UcxWaiter {
 public:
  // Parameters that make UCX call back this waiter (send, flush, put, get,
  // close): to be passed to one *_nbx call.
  ucp_request_param_t param(uint32_t flags = 0) {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    if (flags != 0) {
      param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = flags;
    }
    param.cb.send = &UcxWaiter::completed;
    param.user_data = this;
    return param;
  }

  // What the *_nbx call returned: done at once, failed at once, or a
  // request to wait for.
  void posted(ucs_status_ptr_t result) {
    request_ = UCS_PTR_IS_PTR(result) ? result : nullptr;
    if (!request_) finish(UCS_PTR_STATUS(result));
  }
  bool pending() const { return request_ != nullptr; }

  // Waits until UCX completes the request, then frees it.
  ucs_status_t wait() {
    ucs_status_t status;
    {
      std::unique_lock lock(mutex_);
      done_changed_.wait(lock, [&] { return done_; });
      status = status_;
    }
    // Outside the lock, which UCX's callback takes under the worker's.
    free_request();
    return status;
  }
  // Waits until deadline; false if the request is still pending then.
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return done_changed_.wait_until(lock, deadline, [&] { return done_; });
  }

  ~UcxWaiter() { free_request(); }

 private:
  static void completed(void *, ucs_status_t status, void *user_data) {
    static_cast<UcxWaiter *>(user_data)->finish(status);
  }
  void finish(ucs_status_t status) {
    std::lock_guard lock(mutex_);
    status_ = status;
    done_ = true;
    done_changed_.notify_all();
  }
  void free_request() {
    if (request_) ucp_request_free(request_);
    request_ = nullptr;
  }

  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  ucs_status_t status_ = UCS_OK;
  void *request_ = nullptr;
};

}  // namespace rig::net::detail
