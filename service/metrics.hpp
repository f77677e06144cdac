// rigd's metrics file (rigd --metrics FILE, metrics_file): rigd's counters
// in Prometheus' text format, written every metrics_interval_ms for
// node_exporter's textfile collector.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace rigd {

class MetricsWriter {
 public:
  // Writes file every interval on a thread of its own, from a snapshot
  // that rigd's admin channel at socket answers (rigd's own, asked as its
  // own user): the snapshot `rig metrics` prints, through the same
  // formatter (metrics_text.h).  Each write goes to FILE.tmp, then renames
  // it over file, so that a reader never sees half of one.  A snapshot or
  // write that fails is said on stderr once and tried again next time.
  MetricsWriter(std::string file, std::chrono::milliseconds interval, std::string socket);
  // Stops the thread; the file stays.
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter &) = delete;
  MetricsWriter &operator=(const MetricsWriter &) = delete;

 private:
  void run();
  // Writes the file once; "" or why not.
  std::string write_once() const;

  std::string file_, socket_;
  std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace rigd
