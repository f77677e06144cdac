// rigd's metrics file (metrics.hpp).
#include "metrics.hpp"

#include "log.hpp"

#include "metrics_text.h"

#include <rig/service.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rigd {

MetricsWriter::MetricsWriter(std::string file, std::chrono::milliseconds interval, std::string socket)
    : file_(std::move(file)), socket_(std::move(socket)), interval_(interval), thread_([this] { run(); }) {}

MetricsWriter::~MetricsWriter() {
  {
    std::lock_guard g(mu_);
    stopping_ = true;
  }
  stop_.notify_all();
  thread_.join();
}

void MetricsWriter::run() {
  std::string said;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    std::string why = write_once();
    // A failure is said once, not every interval, and again once it changes.
    if (!why.empty() && why != said) log_line(LogLevel::warning, "metrics: " + why);
    said = why;
    lock.lock();
    stop_.wait_for(lock, interval_, [&] { return stopping_; });
  }
}

std::string MetricsWriter::write_once() const {
  rig_service_options_t options{sizeof options, socket_.c_str()};
  rig_service_stats_t *stats = nullptr;
  if (rig_service_stats(&options, &stats) != RIG_OK) return std::string("no snapshot: ") + rig_last_error();
  std::string temporary = file_ + ".tmp";
  std::FILE *out = std::fopen(temporary.c_str(), "we");
  if (!out) {
    rig_service_stats_release(stats);
    return "cannot write " + temporary + ": " + std::strerror(errno);
  }
  bool written = write_metrics_text(out, stats);
  rig_service_stats_release(stats);
  int error = errno;
  if (std::fclose(out) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written || std::rename(temporary.c_str(), file_.c_str()) != 0) {
    if (written) error = errno;
    std::remove(temporary.c_str());
    return "cannot write " + file_ + ": " + std::strerror(error);
  }
  return "";
}

}  // namespace rigd
