// Checked work through librig's public API (known_work.hpp).
#include "known_work.hpp"

#include "client_process.hpp"

#include <rig/service.h>

#include <vector>

void connect_service(const std::string &socket) {
  rig_service_options_t options{sizeof options, socket.c_str()};
  rig_status_t status = rig_service_connect(&options, NULL);
  require(status == RIG_OK, "rig_service_connect: %s: %s", rig_status_name(status), rig_last_error());
}

rig_device_t *open_device(const std::string &name) {
  rig_device_t *d = nullptr;
  rig_status_t status = rig_open(name.c_str(), nullptr, &d);
  require(status == RIG_OK, "rig_open(%s): %s: %s", name.c_str(), rig_status_name(status), rig_last_error());
  return d;
}

rig_buffer_t *create_buffer(rig_device_t *d, int64_t n) {
  rig_buffer_t *b = nullptr;
  rig_status_t status = rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b);
  require(status == RIG_OK, "rig_buffer_create(%s, %lld): %s: %s", rig_device_name(d), static_cast<long long>(n),
          rig_status_name(status), rig_last_error());
  return b;
}

rig_buffer_t *import_sent_token(int link, rig_device_t *d) {
  uint64_t token = 0;
  require(receive_value(link, token, client_start_ms), "no token");
  rig_buffer_t *b = nullptr;
  rig_status_t status = rig_service_import(d, token, &b);
  require(status == RIG_OK, "import: %s: %s", rig_status_name(status), rig_last_error());
  return b;
}

rig_buffer_t *import_until_the_exporter_goes(int link, rig_device_t *d) {
  rig_buffer_t *b = import_sent_token(link, d);
  require(send_value(link, 1), "the exporter is gone");
  uint64_t none;
  require(!receive_value(link, none, client_start_ms), "the exporter sent more");
  return b;
}

uint8_t pattern_byte(uint64_t seed, int64_t i) {
  return static_cast<uint8_t>(seed * 29 + static_cast<uint64_t>(i) * 131 + (static_cast<uint64_t>(i) >> 9));
}

void write_pattern(rig_buffer_t *b, uint64_t seed) {
  int64_t n = rig_buffer_bytes(b);
  std::vector<uint8_t> bytes(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) bytes[static_cast<size_t>(i)] = pattern_byte(seed, i);
  rig_status_t status = rig_buffer_blit_from_bytes(bytes.data(), n, 0, b, 0, n);
  require(status == RIG_OK, "rig_buffer_blit_from_bytes: %s: %s", rig_status_name(status), rig_last_error());
}

std::vector<uint8_t> read_bytes(rig_buffer_t *b) {
  int64_t n = rig_buffer_bytes(b);
  std::vector<uint8_t> bytes(static_cast<size_t>(n));
  rig_status_t status = rig_buffer_blit_to_bytes(b, 0, bytes.data(), n, 0, n);
  require(status == RIG_OK, "rig_buffer_blit_to_bytes: %s: %s", rig_status_name(status), rig_last_error());
  return bytes;
}

void check_pattern(rig_buffer_t *b, uint64_t seed, int64_t first) {
  std::vector<uint8_t> bytes = read_bytes(b);
  for (size_t i = 0; i < bytes.size(); ++i) {
    uint8_t expected = pattern_byte(seed, first + static_cast<int64_t>(i));
    require(bytes[i] == expected, "byte %zu of %zu is %u, not pattern %llu's %u", i, bytes.size(), bytes[i],
            static_cast<unsigned long long>(seed), expected);
  }
}

KnownWork::KnownWork(rig_device_t *d, int64_t bytes)
    : a_(create_buffer(d, bytes)), b_(create_buffer(d, bytes)), c_(create_buffer(d, bytes)) {}

KnownWork::~KnownWork() {
  rig_buffer_unref(a_);
  rig_buffer_unref(b_);
  rig_buffer_unref(c_);
}

void KnownWork::run(uint64_t seed) {
  write_pattern(a_, seed);
  rig_point_t copied, filled;
  rig_box_t all = rig_row(0, 0, rig_buffer_bytes(a_));
  rig_status_t status = rig_buffer_submit_copy(a_, b_, &all, 1, nullptr, 0, &copied);
  require(status == RIG_OK, "rig_buffer_submit_copy: %s: %s", rig_status_name(status), rig_last_error());
  auto fill = static_cast<uint8_t>(seed);
  status = rig_buffer_submit_fill(c_, fill, nullptr, 0, &filled);
  require(status == RIG_OK, "rig_buffer_submit_fill: %s: %s", rig_status_name(status), rig_last_error());
  status = rig_point_wait(filled);
  require(status == RIG_OK, "rig_point_wait: %s: %s", rig_status_name(status), rig_last_error());
  check_pattern(b_, seed);
  for (uint8_t byte : read_bytes(c_)) require(byte == fill, "a filled byte is %u, not %u", byte, fill);
}

int run_steady_client(const std::string &socket, int channel) {
  connect_service(socket);
  KnownWork on_mem(open_device("MEM:0@rigd"), 64 << 10);
  KnownWork on_sim(open_device("SIM:0@rigd"), 64 << 10);
  require(send_value(channel, 1), "the test is gone");
  uint64_t rounds = 0;
  while (!readable(channel)) {
    on_mem.run(rounds);
    on_sim.run(rounds + 1);
    ++rounds;
  }
  uint64_t stop;
  require(receive_value(channel, stop, 1000), "no stop from the test");
  require(send_value(channel, rounds), "the test is gone");
  return 0;
}
