/* rigd under load from three client processes of two threads each, in plain
 * C++ with an exit status so that it runs under ThreadSanitizer (rigd, built
 * with the same flags, reports its own races by its exit status).
 *
 * The test's own process never calls librig: it starts rigd and forks the
 * clients first.  For about two seconds, concurrently:
 *  - chained work on MEM:0@rigd and SIM:0@rigd: each value waits on a point
 *    of the other proxy (rigd's cross-proxy waits and its per-device
 *    completion lanes); COPY-53, COPY-91: once the last point is reached, so
 *    is every point it waited on, and every byte is the one written;
 *  - client 0 exports a buffer of each proxy (rig_service_share) and client
 *    1 imports them (rig_service_import), finds the bytes the exporter wrote
 *    before it shared them (service.h: the exporter's submit returned
 *    first), and writes and reads them in a loop;
 *  - client 2's SIM:0@rigd is opened with fault_at=50: its value faults,
 *    its waits answer RIG_ELOST with the sim's reason (LOSS-01), and after
 *    rig_close a new open of the name is a new, working proxy (LOSS-09);
 *    its other thread and the other clients see no failure (a fault in one
 *    client's work loses that client's proxy alone).
 * Then every client exits 0, and rigd exits 0 on SIGTERM. */
#include <rig/rig.h>
#include <rig/service.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// How long each client thread works: a loop runs rounds until then, and at
// least min_rounds, so that a slow start (under a sanitizer) still works.
constexpr auto work_time = std::chrono::seconds(2);
constexpr uint64_t min_rounds = 3;
// Bounds only a hang reaches: rigd's start, a client's whole life, a token's
// or a done's arrival on a pipe, rigd's end.
constexpr auto rigd_start_bound = std::chrono::seconds(30);
constexpr auto client_bound = std::chrono::seconds(120);
constexpr int pipe_bound_ms = 60000;
constexpr auto rigd_end_bound = std::chrono::seconds(30);
// The faulting proxy's value that faults, and the bound within which its
// thread must have seen the fault.
constexpr const char *fault_config = "fault_at=50";
constexpr auto fault_bound = std::chrono::seconds(30);
constexpr int64_t buffer_bytes = 16 << 10;

// ------------------------------------------------------------------------
// Checks: a failed one throws, and the client thread reports it.

std::string format(const char *f, va_list args) {
  char text[1024];
  std::vsnprintf(text, sizeof text, f, args);
  return text;
}

void require(bool condition, const char *f, ...) __attribute__((format(printf, 2, 3)));
void require(bool condition, const char *f, ...) {
  if (condition) return;
  va_list args;
  va_start(args, f);
  std::string why = format(f, args);
  va_end(args);
  throw std::runtime_error(why);
}

void require_ok(rig_status_t status, const char *what) {
  require(status == RIG_OK, "%s: %s: %s", what, rig_status_name(status), rig_last_error());
}

struct Unref {
  void operator()(rig_buffer_t *b) const noexcept { rig_buffer_unref(b); }
};
using Buffer = std::unique_ptr<rig_buffer_t, Unref>;

rig_device_t *open_device(const char *name, const char *config) {
  rig_open_options_t options{sizeof options, config};
  rig_device_t *d = nullptr;
  rig_status_t status = rig_open(name, &options, &d);
  require(status == RIG_OK, "rig_open(%s, \"%s\"): %s: %s", name, config, rig_status_name(status), rig_last_error());
  return d;
}

Buffer create(rig_device_t *d) {
  rig_buffer_t *b = nullptr;
  require_ok(rig_buffer_create(d, buffer_bytes, RIG_MEMORY_DEVICE, &b), "rig_buffer_create");
  return Buffer(b);
}

// Byte i of the pattern of seed: no two neighbouring bytes or seeds alike.
uint8_t pattern_byte(uint64_t seed, int64_t i) {
  return static_cast<uint8_t>(seed * 29 + static_cast<uint64_t>(i) * 131 + (static_cast<uint64_t>(i) >> 9));
}

std::vector<uint8_t> read_bytes(rig_buffer_t *b, rig_status_t *status) {
  std::vector<uint8_t> bytes(static_cast<size_t>(buffer_bytes));
  *status = rig_buffer_blit_to_bytes(b, 0, bytes.data(), buffer_bytes, 0, buffer_bytes);
  return bytes;
}

// Checks that b's bytes are all value once read; answers the read's status.
rig_status_t check_filled(rig_buffer_t *b, uint8_t value, const char *what) {
  rig_status_t status;
  std::vector<uint8_t> bytes = read_bytes(b, &status);
  if (status != RIG_OK) return status;
  for (size_t i = 0; i < bytes.size(); ++i)
    require(bytes[i] == value, "%s: byte %zu is %#x, not %#x", what, i, bytes[i], value);
  return RIG_OK;
}

void check_pattern(rig_buffer_t *b, uint64_t seed, const char *what) {
  rig_status_t status;
  std::vector<uint8_t> bytes = read_bytes(b, &status);
  require_ok(status, what);
  for (size_t i = 0; i < bytes.size(); ++i) {
    uint8_t expected = pattern_byte(seed, static_cast<int64_t>(i));
    require(bytes[i] == expected, "%s: byte %zu is %#x, not %#x", what, i, bytes[i], expected);
  }
}

bool reached(rig_point_t p) {
  bool done = false;
  return rig_point_reached(p, &done) == RIG_OK && done;
}

// ------------------------------------------------------------------------
// Work of a client thread.

// A round of chained work over two buffers of each of two proxies (one
// proxy twice where first == second): each value waits on the value before
// it, of the other proxy where there are two.  Answers RIG_OK, or the
// first status other than RIG_OK of a rig call, for the caller to judge;
// throws where a byte or a point is wrong.
class Chain {
 public:
  Chain(rig_device_t *first, rig_device_t *second)
      : a_src_(create(first)), a_dst_(create(first)), b_src_(create(second)), b_dst_(create(second)) {}

  rig_status_t round(uint8_t a) {
    uint8_t b = static_cast<uint8_t>(a ^ 0xa5);
    rig_box_t all = rig_row(0, 0, buffer_bytes);
    rig_point_t filled_a, filled_b, copied_ab, copied_ba;
    rig_status_t s;
    if ((s = rig_buffer_submit_fill(a_src_.get(), a, nullptr, 0, &filled_a)) != RIG_OK) return s;
    if ((s = rig_buffer_submit_fill(b_src_.get(), b, &filled_a, 1, &filled_b)) != RIG_OK) return s;
    if ((s = rig_buffer_submit_copy(a_src_.get(), b_dst_.get(), &all, 1, &filled_b, 1, &copied_ab)) != RIG_OK) return s;
    if ((s = rig_buffer_submit_copy(b_src_.get(), a_dst_.get(), &all, 1, &copied_ab, 1, &copied_ba)) != RIG_OK)
      return s;
    if ((s = rig_point_wait(copied_ba)) != RIG_OK) return s;
    // COPY-53, COPY-91: a reached point's waits are reached, down the chain.
    require(reached(copied_ab), "a copy is reached before the copy it waits on");
    require(reached(filled_b), "a copy is reached before the fill it waits on");
    require(reached(filled_a), "a fill is reached before the fill it waits on");
    if ((s = check_filled(a_src_.get(), a, "the first fill")) != RIG_OK) return s;
    if ((s = check_filled(b_src_.get(), b, "the second fill")) != RIG_OK) return s;
    if ((s = check_filled(b_dst_.get(), a, "the first copy")) != RIG_OK) return s;
    return check_filled(a_dst_.get(), b, "the second copy");
  }

 private:
  Buffer a_src_, a_dst_, b_src_, b_dst_;
};

// A round's fill byte, unlike the last round's and other threads'.
uint8_t round_byte(int thread, uint64_t round) { return static_cast<uint8_t>(round * 7 + thread * 61 + 1); }

bool more_rounds(uint64_t round, Clock::time_point end) { return round < min_rounds || Clock::now() < end; }

// Answers the rounds it ran.
uint64_t chain_until(rig_device_t *first, rig_device_t *second, int thread, Clock::time_point end) {
  Chain chain(first, second);
  uint64_t round = 0;
  for (; more_rounds(round, end); ++round) require_ok(chain.round(round_byte(thread, round)), "chain");
  return round;
}

// A proxy opened with fault_at: its rounds run until the faulting value,
// whose status is RIG_ELOST with the sim's reason; the proxy, closed and
// opened anew with no configuration, runs on with no failure.  Answers the
// rounds it ran.
uint64_t fault_and_reopen(int thread, Clock::time_point end) {
  rig_device_t *faulting = open_device("SIM:0@rigd", fault_config);
  auto chain = std::make_unique<Chain>(faulting, faulting);
  rig_device_t *fresh = nullptr;
  uint64_t rounds_after = 0, round = 0;
  for (; !fresh || more_rounds(rounds_after, end); ++round) {
    require(fresh || Clock::now() < end + fault_bound, "no value of the proxy with %s faulted", fault_config);
    rig_status_t s = chain->round(round_byte(thread, round));
    if (fresh) {
      require_ok(s, "the reopened proxy");
      ++rounds_after;
      continue;
    }
    if (s == RIG_OK) continue;
    require(s == RIG_ELOST, "the faulting proxy answers %s, not RIG_ELOST: %s", rig_status_name(s), rig_last_error());
    const char *why = rig_lost(faulting);
    require(why && std::strstr(why, "faulted (the fault_at knob)"),
            "the proxy is lost with \"%s\", not the sim's reason", why ? why : "");
    chain.reset();
    require_ok(rig_close(faulting), "rig_close of the lost proxy");
    fresh = open_device("SIM:0@rigd", "");
    require(!rig_device_equal(fresh, faulting), "the name opened anew is a new device (LOSS-09)");
    chain = std::make_unique<Chain>(fresh, fresh);
  }
  return round;
}

// Writes v whole on fd; false where the reader is gone (clients ignore
// SIGPIPE).
bool send_value(int fd, uint64_t v) { return write(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v); }

// Reads a whole value from fd within the bound; false at end of file.
bool receive_value(int fd, uint64_t &v) {
  pollfd p{fd, POLLIN, 0};
  require(poll(&p, 1, pipe_bound_ms) == 1, "nothing came on a pipe within %d ms", pipe_bound_ms);
  ssize_t n = read(fd, &v, sizeof v);
  require(n == 0 || n == static_cast<ssize_t>(sizeof v), "a short read from a pipe");
  return n == static_cast<ssize_t>(sizeof v);
}

// Exports a buffer of each proxy, written with a pattern, and sends the
// tokens; holds the exports until the importer says it is done (or is gone).
// Answers the rounds of chained work it ran meanwhile.
uint64_t export_buffers(rig_device_t *mem, rig_device_t *sim, int token_fd, int done_fd, int thread,
                        Clock::time_point end) {
  std::array<Buffer, 2> exported{create(mem), create(sim)};
  for (size_t i = 0; i < exported.size(); ++i) {
    std::vector<uint8_t> bytes(static_cast<size_t>(buffer_bytes));
    for (int64_t j = 0; j < buffer_bytes; ++j) bytes[static_cast<size_t>(j)] = pattern_byte(i, j);
    require_ok(rig_buffer_blit_from_bytes(bytes.data(), buffer_bytes, 0, exported[i].get(), 0, buffer_bytes),
               "write the exported buffer");
    uint64_t token = 0;
    require_ok(rig_service_share(exported[i].get(), &token), "rig_service_share");
    require(send_value(token_fd, token), "write a token: %s", std::strerror(errno));
  }
  uint64_t rounds = chain_until(sim, mem, thread, end);
  uint64_t done;
  receive_value(done_fd, done);
  return rounds;
}

// Imports the two tokens and writes and reads the imported bytes in a loop:
// a pattern written, copied into a buffer of the importer's, then a fill.
// Answers the rounds it ran.
uint64_t import_buffers(rig_device_t *mem, rig_device_t *sim, int token_fd, int done_fd, Clock::time_point end) {
  struct Imported {
    Buffer bytes, own;
  };
  std::vector<Imported> imports;
  for (rig_device_t *d : {mem, sim}) {
    uint64_t token = 0;
    require(receive_value(token_fd, token), "the exporter went before it sent a token");
    rig_buffer_t *b = nullptr;
    require_ok(rig_service_import(d, token, &b), "rig_service_import");
    imports.push_back({Buffer(b), create(d)});
  }
  // The exporter wrote pattern i into its buffer i before it shared it.
  for (size_t i = 0; i < imports.size(); ++i) check_pattern(imports[i].bytes.get(), i, "an import's first bytes");
  std::vector<uint8_t> bytes(static_cast<size_t>(buffer_bytes));
  rig_box_t all = rig_row(0, 0, buffer_bytes);
  uint64_t round = 0;
  for (; more_rounds(round, end); ++round) {
    Imported &im = imports[round % imports.size()];
    uint64_t seed = round + 2;
    for (int64_t j = 0; j < buffer_bytes; ++j) bytes[static_cast<size_t>(j)] = pattern_byte(seed, j);
    require_ok(rig_buffer_blit_from_bytes(bytes.data(), buffer_bytes, 0, im.bytes.get(), 0, buffer_bytes),
               "write an import");
    rig_point_t copied, filled;
    require_ok(rig_buffer_submit_copy(im.bytes.get(), im.own.get(), &all, 1, nullptr, 0, &copied), "copy an import");
    require_ok(rig_point_wait(copied), "wait for an import's copy");
    check_pattern(im.own.get(), seed, "an import's copy");
    auto value = static_cast<uint8_t>(round * 3 + 1);
    require_ok(rig_buffer_submit_fill(im.bytes.get(), value, &copied, 1, &filled), "fill an import");
    require_ok(rig_point_wait(filled), "wait for an import's fill");
    require_ok(check_filled(im.bytes.get(), value, "an import's fill"), "read an import");
  }
  // Where the exporter is gone, its own status says why.
  send_value(done_fd, 1);
  return round;
}

// ------------------------------------------------------------------------
// Client processes.

enum class Role { exporter, importer, faulting };
constexpr std::array<Role, 3> roles = {Role::exporter, Role::importer, Role::faulting};

const char *role_name(Role role) {
  switch (role) {
    case Role::exporter:
      return "exporting";
    case Role::importer:
      return "importing";
    case Role::faulting:
      return "faulting";
  }
  return "";
}

struct Pipes {
  int token[2];  // exporter to importer
  int done[2];   // importer to exporter
};

// Runs a client's two threads; answers its exit status.  Each thread
// prints the rounds it ran, or its failure, which ends it.
int run_client(const std::string &socket, Role role, const Pipes &pipes) {
  rig_service_options_t options{sizeof options, socket.c_str()};
  rig_status_t connected = rig_service_connect(&options, nullptr);
  if (connected != RIG_OK) {
    std::fprintf(stderr, "rig_service_connect: %s: %s\n", rig_status_name(connected), rig_last_error());
    return 1;
  }
  std::atomic<int> failures{0};
  Clock::time_point end = Clock::now() + work_time;
  auto start = [&](int index, const std::function<uint64_t()> &body) {
    return std::thread([&failures, role, index, body] {
      try {
        uint64_t rounds = body();
        std::printf("%s client, thread %d: %llu rounds\n", role_name(role), index,
                    static_cast<unsigned long long>(rounds));
      } catch (const std::exception &e) {
        std::fprintf(stderr, "%s client, thread %d: %s\n", role_name(role), index, e.what());
        failures.fetch_add(1);
      }
    });
  };
  // Both threads open the names they share, so that the opens race too.
  auto both = [] { return std::pair(open_device("MEM:0@rigd", ""), open_device("SIM:0@rigd", "")); };
  std::thread first, second;
  switch (role) {
    case Role::exporter:
      first = start(0, [&] {
        auto [mem, sim] = both();
        return chain_until(mem, sim, 0, end);
      });
      second = start(1, [&] {
        auto [mem, sim] = both();
        return export_buffers(mem, sim, pipes.token[1], pipes.done[0], 1, end);
      });
      break;
    case Role::importer:
      first = start(0, [&] {
        auto [mem, sim] = both();
        return chain_until(mem, sim, 0, end);
      });
      second = start(1, [&] {
        auto [mem, sim] = both();
        return import_buffers(mem, sim, pipes.token[0], pipes.done[1], end);
      });
      break;
    case Role::faulting:
      // The process's SIM:0@rigd is the faulting one: the other thread
      // works on MEM:0@rigd alone, which the fault must leave alone.
      first = start(0, [&] { return fault_and_reopen(0, end); });
      second = start(1, [&] {
        rig_device_t *mem = open_device("MEM:0@rigd", "");
        return chain_until(mem, mem, 1, end);
      });
      break;
  }
  first.join();
  second.join();
  return failures.load() == 0 ? 0 : 1;
}

// Forks a client that runs run_client and exits with its status, keeping
// only its own ends of the pipes.
pid_t fork_client(const std::string &socket, Role role, const Pipes &pipes) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  int keep[2] = {-1, -1};
  if (role == Role::exporter) keep[0] = pipes.token[1], keep[1] = pipes.done[0];
  if (role == Role::importer) keep[0] = pipes.token[0], keep[1] = pipes.done[1];
  for (int fd : {pipes.token[0], pipes.token[1], pipes.done[0], pipes.done[1]})
    if (fd != keep[0] && fd != keep[1]) close(fd);
  int status = 1;
  try {
    status = run_client(socket, role, pipes);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s client: %s\n", role_name(role), e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(status);
}

// ------------------------------------------------------------------------
// rigd.

bool accepts(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool connected = connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

// Starts rigd on socket with the config file config and returns its pid
// once it accepts, or -1 (said why).
pid_t start_rigd(const std::string &socket, const std::string &config) {
  std::vector<std::string> words = {"rigd",        "--socket", socket, "--devices", "MEM:0,SIM:0",
                                    "--foreground", "--config", config};
  std::vector<char *> argv;
  for (auto &w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    execv(RIGD_PATH, argv.data());
    _exit(127);
  }
  if (pid < 0) return -1;
  for (auto deadline = Clock::now() + rigd_start_bound; !accepts(socket);) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      std::fprintf(stderr, "rigd exited before it accepted: status %#x\n", status);
      return -1;
    }
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "rigd did not accept within its bound\n");
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pid;
}

// Waits up to bound for pid; SIGKILLs it past the bound (timed_out).
int await(pid_t pid, Clock::duration bound, bool *timed_out) {
  auto deadline = Clock::now() + bound;
  int status = 0;
  *timed_out = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      *timed_out = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

bool exited_cleanly(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace

int main() {
  std::string directory = (std::filesystem::temp_directory_path() / "stress-rigd-XXXXXX").string();
  if (!mkdtemp(directory.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  std::string socket = directory + "/rigd.sock";
  // The faulting client's fault_at is a test knob, which rigd's policy
  // must allow.
  std::string config = directory + "/rigd.conf";
  std::ofstream(config) << "test_knobs = allow\n";
  int failures = 0;
  pid_t rigd = start_rigd(socket, config);
  if (rigd > 0) {
    Pipes pipes{};
    if (pipe2(pipes.token, O_CLOEXEC) != 0 || pipe2(pipes.done, O_CLOEXEC) != 0) {
      std::perror("pipe2");
      return 1;
    }
    std::vector<pid_t> clients;
    for (Role role : roles) clients.push_back(fork_client(socket, role, pipes));
    for (int fd : {pipes.token[0], pipes.token[1], pipes.done[0], pipes.done[1]}) close(fd);
    for (size_t i = 0; i < clients.size(); ++i) {
      bool timed_out = false;
      int status = clients[i] > 0 ? await(clients[i], client_bound, &timed_out) : -1;
      if (!exited_cleanly(status)) {
        ++failures;
        std::fprintf(stderr, "the %s client %s: wait status %#x\n", role_name(roles[i]),
                     timed_out ? "did not end within its bound" : "failed", status);
      }
    }
    kill(rigd, SIGTERM);
    bool timed_out = false;
    int status = await(rigd, rigd_end_bound, &timed_out);
    if (!exited_cleanly(status)) {
      ++failures;
      std::fprintf(stderr, "rigd %s on SIGTERM: wait status %#x\n", timed_out ? "did not end" : "did not exit 0",
                   status);
    }
  } else {
    ++failures;
  }
  std::filesystem::remove_all(directory);
  if (failures) {
    std::fprintf(stderr, "stress_rigd: %d failures\n", failures);
    return 1;
  }
  std::printf("stress_rigd: ok\n");
  return 0;
}
