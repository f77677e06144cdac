/* Tests of rigd, the built program, through its socket and shared segments
 * as a client sees them (the client's side of the handshake:
 * drivers/proxy/handshake.hpp).
 *
 * No rule ID: rigd's admission, handshake and segments are the design's
 * (DESIGN.md "The per-host service").  Asserts: the handshake lists the
 * served devices, the machine's host (CPU) last, and passes the device, completion and ring segments, the
 * first two sealed against writable mappings and all against resizing; a
 * NOP request completes through the rings; a malformed entry gets an error
 * completion and the session goes on; a client that breaks the rings'
 * protocol is disconnected; a client of another protocol version, and a
 * user the policy does not admit, are refused with the reason; socket
 * activation (LISTEN_FDS) serves on the passed socket; SIGTERM ends rigd
 * with status 0 and removes the socket it bound; rigd refuses to start
 * over a path that is not a socket, and leaves what is there; rigd tells
 * systemd (NOTIFY_SOCKET) it is ready, then stopping. */
#include "handshake.hpp"
#include "rigd_process.hpp"
#include "ring_segment.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace rig::proxy;

namespace {

const std::vector<std::string> served = {"--devices", "SIM:0,MEM:0"};

// A client's mapping of its ring segment, checked as the proxy driver does.
struct MappedRings {
  void *base = MAP_FAILED;
  size_t bytes = 0;
  rig_proxy_ring_segment layout{};

  explicit MappedRings(const ServiceConnection &c) {
    struct stat st;
    cr_assert(fstat(c.ring_segment.get(), &st) == 0);
    bytes = static_cast<size_t>(st.st_size);
    base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c.ring_segment.get(), 0);
    cr_assert(base != MAP_FAILED);
    std::memcpy(&layout, base, sizeof layout);
    cr_assert(valid_ring_segment(layout, bytes));
  }
  ~MappedRings() { munmap(base, bytes); }
  RingSegment rings() const { return {static_cast<std::byte *>(base), layout}; }
};

rig_proxy_completion round_trip(RingProducer<rig_proxy_entry> &submissions,
                                RingConsumer<rig_proxy_completion> &completions, const rig_proxy_entry &e) {
  cr_assert(submissions.push(e) == RingStatus::ok);
  rig_proxy_completion c;
  RingStatus status;
  while ((status = completions.pop(c)) == RingStatus::empty) completions.sleep(1000);
  cr_assert(status == RingStatus::ok);
  return c;
}

rig_proxy_entry nop(uint64_t tag, uint64_t value) {
  rig_proxy_entry e{};
  e.opcode = RIG_PROXY_OP_NOP;
  e.tag = tag;
  e.args[0] = value;
  return e;
}

std::string refusal(const std::string &path, uint32_t version = RIG_PROXY_VERSION) {
  try {
    connect_to_rigd(path, version);
  } catch (const HandshakeError &e) {
    return e.what();
  }
  return "";
}

bool ended_cleanly(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace

Test(rigd, handshake_lists_devices_and_passes_sealed_segments, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  ServiceConnection c = connect_to_rigd(rigd.socket);
  cr_assert(c.devices.size() == 3, "the devices named, then the machine's host");
  cr_assert(std::string(c.devices[0].name) == "SIM:0" && std::string(c.devices[1].name) == "MEM:0");
  cr_assert(std::string(c.devices[1].arch) == "memory");
  cr_assert(c.devices[0].flags == 0 && c.devices[1].flags == 0);
  cr_assert(std::string(c.devices[2].name) == "CPU" && c.devices[2].flags == RIG_PROXY_DEVICE_HOST);
  cr_assert(std::string(c.devices[2].arch) != "memory", "the host's arch, not its work device's");

  for (int fd : {c.device_segment.get(), c.completion_segment.get()}) {
    cr_assert(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED,
              "a client cannot map a read-only segment to write it");
    void *read_only = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert(read_only != MAP_FAILED);
    munmap(read_only, 4096);
  }
  for (int fd : {c.device_segment.get(), c.completion_segment.get(), c.ring_segment.get()})
    cr_assert(ftruncate(fd, 0) != 0, "no segment shrinks");

  void *devices = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, c.device_segment.get(), 0);
  rig_proxy_device_segment header;
  std::memcpy(&header, devices, sizeof header);
  munmap(devices, 4096);
  cr_assert(header.segment.magic == RIG_PROXY_MAGIC_DEVICES && header.device_count == 3);

  MappedRings mapped(c);
  auto submissions = mapped.rings().submission_producer();
  auto completions = mapped.rings().completion_consumer();
  rig_proxy_completion answer = round_trip(submissions, completions, nop(7, 42));
  cr_assert(answer.tag == 7 && answer.status == 0 && answer.value == 42);
  cr_assert(ended_cleanly(stop_rigd(rigd)));
}

Test(rigd, malformed_entry_gets_an_error_completion, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  ServiceConnection c = connect_to_rigd(rigd.socket);
  MappedRings mapped(c);
  auto submissions = mapped.rings().submission_producer();
  auto completions = mapped.rings().completion_consumer();
  rig_proxy_entry bad = nop(1, 0);
  bad.opcode = 999;
  cr_assert(round_trip(submissions, completions, bad).status == -1, "RIG_EINVAL for an unknown opcode");
  bad = nop(2, 0);
  bad.reserved = 1;
  cr_assert(round_trip(submissions, completions, bad).status == -1, "RIG_EINVAL for a reserved field set");
  rig_proxy_completion after = round_trip(submissions, completions, nop(3, 9));
  cr_assert(after.tag == 3 && after.status == 0 && after.value == 9, "the session goes on");
  cr_assert(ended_cleanly(stop_rigd(rigd)));
}

Test(rigd, ring_breach_disconnects_the_client, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  ServiceConnection c = connect_to_rigd(rigd.socket);
  MappedRings mapped(c);
  auto *submission = reinterpret_cast<rig_proxy_ring_header *>(static_cast<std::byte *>(mapped.base) +
                                                               mapped.layout.submission_offset);
  std::atomic_ref<uint32_t>(submission->tail).store(mapped.layout.submission_entries + 5);
  futex_wake(&submission->sleeping, 1);
  char byte;
  cr_assert(recv(c.socket.get(), &byte, 1, 0) == 0, "rigd closes the connection");
  ServiceConnection other = connect_to_rigd(rigd.socket);
  cr_assert(other.devices.size() == 3, "rigd serves other clients on");
  cr_assert(ended_cleanly(stop_rigd(rigd)));
}

Test(rigd, another_protocol_version_is_refused, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  std::string why = refusal(rigd.socket, RIG_PROXY_VERSION + 1);
  cr_assert(why.find("protocol version") != std::string::npos, "%s", why.c_str());
  cr_assert(ended_cleanly(stop_rigd(rigd)));
}

Test(rigd, a_user_the_policy_does_not_admit_is_refused, .timeout = 60) {
  RigdProcess rigd =
      start_rigd_with_config({"--devices", "MEM:0"}, "allow_users = " + std::to_string(getuid() + 1) + "\n");
  std::string why = refusal(rigd.socket);
  cr_assert(why.find("not admitted") != std::string::npos, "%s", why.c_str());
  cr_assert(ended_cleanly(stop_rigd(rigd)));
}

Test(rigd, sigterm_ends_rigd_cleanly_with_a_client_connected, .timeout = 60) {
  RigdProcess rigd = start_rigd(served);
  ServiceConnection c = connect_to_rigd(rigd.socket);
  std::string socket = rigd.socket;
  cr_assert(ended_cleanly(stop_rigd(rigd)));
  char byte;
  cr_assert(recv(c.socket.get(), &byte, 1, 0) == 0, "the client sees the connection closed");
  cr_assert(access(socket.c_str(), F_OK) != 0, "rigd removed its socket");
}

Test(rigd, socket_activation_serves_the_passed_socket, .timeout = 60) {
  std::string directory = make_temporary_directory();
  std::string path = directory + "/rigd.sock";
  int listening = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  cr_assert(bind(listening, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0);
  cr_assert(listen(listening, 8) == 0);
  // rigd is given that path too, but serves the socket passed it.
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"}, listening, directory);
  ServiceConnection c = connect_to_rigd(path);
  cr_assert(c.devices.size() == 2);
  cr_assert(ended_cleanly(stop_rigd(rigd)));
  cr_assert(access(path.c_str(), F_OK) == 0, "an activated socket is systemd's to remove");
  close(listening);
}

Test(rigd, refuses_to_start_over_a_path_that_is_not_a_socket, .timeout = 60) {
  std::string directory = make_temporary_directory();
  std::string path = directory + "/rigd.sock";
  std::ofstream(path) << "not rigd's";
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    execl(RIGD_PATH, "rigd", "--socket", path.c_str(), "--devices", "MEM:0", "--foreground", nullptr);
    _exit(127);
  }
  // A rigd that serves there instead is ended, once it had time to exit.
  int status = 0;
  pid_t ended = 0;
  for (int i = 0; i < 200 && (ended = waitpid(pid, &status, WNOHANG)) == 0; ++i) usleep(50000);
  if (ended == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  std::ifstream in(path);
  std::string left((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(directory);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "rigd exits 1 over a regular file: status %#x", status);
  cr_assert(left == "not rigd's", "the file is left as it was: \"%s\"", left.c_str());
}

/* sd_notify(3) under Type=notify (rigd.service): rigd sends READY=1 to
 * NOTIFY_SOCKET once it accepts connections (start_rigd returns on it),
 * and STOPPING=1 as SIGTERM begins its end. */
Test(rigd, tells_systemd_it_is_ready_and_stopping, .timeout = 60) {
  RigdProcess rigd = start_rigd({"--devices", "MEM:0"});
  ServiceConnection c = connect_to_rigd(rigd.socket);
  cr_assert(c.devices.size() == 2, "a ready rigd serves");
  cr_assert(ended_cleanly(stop_rigd(rigd)));
  std::string stopping = next_notification(rigd);
  cr_assert_str_eq(stopping.c_str(), "STOPPING=1");
}
