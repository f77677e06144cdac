/* Tests of rigd against a client that passes it descriptors (SCM_RIGHTS)
 * that are not what its socket's requests take: a host arena's memfd, or
 * one of rigd's export descriptors (protocol.h).  The client speaks the
 * protocol by hand (raw_client.hpp); well-behaved clients are processes on
 * librig's public API (client_process.hpp, known_work.hpp).
 *
 * No rule ID: the statements asserted are the design's trust rules
 * (DESIGN.md "The per-host service": shared segments and arenas are memfds
 * sealed against shrinking, so that no client can make the service fault
 * on memory that vanished; rigd never crashes, hangs or corrupts another
 * client for anything a client does) and protocol.h's refusals with their
 * reason, not the spec's. */
#include "client_process.hpp"
#include "known_work.hpp"
#include "raw_client.hpp"
#include "rigd_process.hpp"
#include "rigd_watch.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using watch::descriptors_of;
using watch::settles_at;

namespace {

RigdProcess start_guarded_rigd() { return start_rigd({"--devices", "MEM:0,SIM:0"}); }

// What each answer may take on a loaded host: only a hang reaches it.
constexpr int answer_ms = 10000;

// A client process that runs KnownWork on both of rigd's devices and
// answers whether every result was right.
bool well_behaved_client_passes(const std::string &socket) {
  pid_t client = fork_client([&] {
    connect_service(socket);
    KnownWork on_mem(open_device("MEM:0@rigd"), 32 << 10);
    KnownWork on_sim(open_device("SIM:0@rigd"), 32 << 10);
    on_mem.run(1);
    on_sim.run(2);
    return 0;
  });
  return ended_cleanly(await_client(client, client_end_s));
}

std::string why_of(const char (&why)[RIG_PROXY_WHY_BYTES]) { return {why, strnlen(why, sizeof why)}; }

// Sends request on the client's socket with fd attached, and reads rigd's
// reply into *reply: false where none comes within within_ms.
template <class Request, class Reply>
bool ask_within(raw::Client &client, const Request &request, int fd, Reply *reply, int within_ms = answer_ms) {
  int socket = client.connection.socket.get();
  cr_assert(rig::proxy::send_message(socket, std::as_bytes(std::span(&request, 1)), std::span(&fd, 1)));
  pollfd p{socket, POLLIN, 0};
  if (poll(&p, 1, within_ms) != 1) return false;
  int attached = -1;
  size_t received = 0;
  cr_assert(rig::proxy::receive_message(socket, std::as_writable_bytes(std::span(reply, 1)), std::span(&attached, 1),
                                        &received));
  if (received) close(attached);
  return true;
}

rig_proxy_arena_reply arena_of(raw::Client &client, int fd, uint64_t bytes) {
  rig_proxy_arena_reply reply{};
  cr_assert(ask_within(client, rig_proxy_arena_request{RIG_PROXY_MAGIC_ARENA, 0, bytes}, fd, &reply),
            "rigd answers an arena request within %d ms", answer_ms);
  return reply;
}

rig_proxy_fd_reply token_of(raw::Client &client, int fd) {
  rig_proxy_fd_reply reply{};
  cr_assert(ask_within(client, rig_proxy_fd_request{RIG_PROXY_MAGIC_EXPORT_FD, RIG_PROXY_EXPORT_OF_FD, 0}, fd, &reply),
            "rigd answers an export descriptor's request within %d ms", answer_ms);
  return reply;
}

// Whether a sealed memfd shares as an arena on client: rigd still serves
// the client.
bool memfd_arena_taken(raw::Client &client) {
  int fd = memfd_create("client-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  cr_assert(fd >= 0 && ftruncate(fd, raw::arena_bytes) == 0 &&
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  rig_proxy_arena_reply reply = arena_of(client, fd, raw::arena_bytes);
  close(fd);
  return reply.status == raw::rig_ok;
}

// A descriptor that is no memfd, and what kind it is.
struct NotMemfd {
  const char *kind;
  int fd;
};

}  // namespace

/* A huge-page memfd (MFD_HUGETLB) can be sealed against shrinking, but
 * hugetlbfs lets its owner punch holes in it whatever its seals, which
 * would make rigd fault (SIGBUS) on an arena's memory that vanished: rigd
 * refuses it as an arena with RIG_EINVAL and a reason that names what an
 * arena must be (a tmpfs memfd), then takes the same client's memfd arena
 * and serves a new client. */
Test(hostile_descriptors, a_huge_page_memfd_is_refused_as_an_arena, .timeout = 120) {
  int huge = memfd_create("huge-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
  if (huge < 0) cr_skip_test("this kernel makes no huge-page memfd (MFD_HUGETLB): %s", strerror(errno));
  // A hugetlbfs file's size is whole pages (its block size).  The arena
  // asked is not: rigd's munmap of it would fail, leaking the mapping.
  struct statfs fs;
  cr_assert(fstatfs(huge, &fs) == 0);
  cr_assert(ftruncate(huge, static_cast<off_t>(fs.f_bsize)) == 0 &&
            fcntl(huge, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  RigdProcess rigd = start_guarded_rigd();
  raw::Client client(rigd.socket);
  rig_proxy_arena_reply reply = arena_of(client, huge, raw::arena_bytes);
  close(huge);
  cr_assert(reply.status == raw::rig_einval, "a huge-page memfd arena answers RIG_EINVAL, not %d", reply.status);
  cr_assert(why_of(reply.why).find("tmpfs") != std::string::npos, "the reason names tmpfs: \"%s\"",
            why_of(reply.why).c_str());
  cr_assert(memfd_arena_taken(client), "the client's memfd arena is taken after");
  cr_assert(well_behaved_client_passes(rigd.socket), "rigd serves a new client");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* A descriptor that is no memfd (a regular file, a pipe, a socket), passed
 * as a host arena or as an export descriptor, answers RIG_EINVAL with a
 * reason that says it is not a memfd; the client's next requests are
 * answered, and rigd serves a new client. */
Test(hostile_descriptors, a_descriptor_that_is_no_memfd_is_refused_with_the_reason, .timeout = 120) {
  RigdProcess rigd = start_guarded_rigd();
  std::string file_path = rigd.directory + "/not-a-memfd";
  int file = open(file_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  cr_assert(file >= 0 && ftruncate(file, raw::arena_bytes) == 0);
  int pipe_ends[2], socket_ends[2];
  cr_assert(pipe2(pipe_ends, O_CLOEXEC) == 0);
  cr_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, socket_ends) == 0);
  raw::Client client(rigd.socket);
  for (NotMemfd d :
       {NotMemfd{"a regular file", file}, NotMemfd{"a pipe", pipe_ends[0]}, NotMemfd{"a socket", socket_ends[0]}}) {
    rig_proxy_arena_reply arena = arena_of(client, d.fd, raw::arena_bytes);
    cr_assert(arena.status == raw::rig_einval, "%s as an arena answers RIG_EINVAL, not %d", d.kind, arena.status);
    cr_assert(why_of(arena.why).find("not a memfd") != std::string::npos, "the reason says %s is not a memfd: \"%s\"",
              d.kind, why_of(arena.why).c_str());
    rig_proxy_fd_reply token = token_of(client, d.fd);
    cr_assert(token.status == raw::rig_einval && token.token == 0,
              "%s as an export descriptor answers RIG_EINVAL, not %d", d.kind, token.status);
    cr_assert(why_of(token.why).find("not a memfd") != std::string::npos, "the reason says %s is not a memfd: \"%s\"",
              d.kind, why_of(token.why).c_str());
  }
  for (int fd : {file, pipe_ends[0], pipe_ends[1], socket_ends[0], socket_ends[1]}) close(fd);
  cr_assert(memfd_arena_taken(client), "the client's memfd arena is taken after");
  cr_assert(well_behaved_client_passes(rigd.socket), "rigd serves a new client");
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

namespace {

// A FUSE file system of one file, "file", served by a process of the
// test's that answers every request but those of rigd's threads, which it
// never answers: a client's file whose every call that reaches its file
// system (fstat, fstatfs, the flush of a close) waits for as long as the
// client wants.
class StuckFuse {
 public:
  // Mounts the file system on directory, for rigd's threads to wait on;
  // *why says why where no FUSE mount can be made here.
  StuckFuse(const std::string &directory, pid_t rigd, std::string *why) : directory_(directory) {
    int device = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (device < 0) {
      *why = std::string("/dev/fuse: ") + strerror(errno);
      return;
    }
    std::string options = "fd=" + std::to_string(device) + ",rootmode=40000,user_id=" + std::to_string(getuid()) +
                          ",group_id=" + std::to_string(getgid());
    if (mount("rigd-test", directory.c_str(), "fuse", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      *why = std::string("mount of a FUSE file system: ") + strerror(errno);
      close(device);
      return;
    }
    server_ = fork_client([device, rigd] { return serve(device, rigd); }, {device});
    // The server holds the only descriptor of the connection: once it
    // goes, every call waiting on the file system fails.
    close(device);
  }

  StuckFuse(const StuckFuse &) = delete;
  StuckFuse &operator=(const StuckFuse &) = delete;
  ~StuckFuse() { end(); }

  bool mounted() const { return server_ > 0; }

  // The file, opened, and its mount detached from the tree, so that no
  // path reaches it once the test ends however it ends.
  int open_file() {
    int fd = open((directory_ + "/file").c_str(), O_RDWR | O_CLOEXEC);
    int error = errno;
    cr_assert(umount2(directory_.c_str(), MNT_DETACH) == 0);
    cr_assert(fd >= 0, "open of the FUSE file: %s", strerror(error));
    return fd;
  }

  // Ends the server: calls that wait on it fail (ENOTCONN).
  void end() {
    if (server_ <= 0) return;
    kill(server_, SIGKILL);
    waitpid(server_, nullptr, 0);
    server_ = -1;
  }

 private:
  static constexpr uint64_t root = FUSE_ROOT_ID, file = 2;

  static bool of_rigd(pid_t rigd, uint32_t thread) {
    return access(("/proc/" + std::to_string(rigd) + "/task/" + std::to_string(thread)).c_str(), F_OK) == 0;
  }

  // Answers request unique with error (a negative errno), or with out.
  static void answer(int device, uint64_t unique, int error, const void *out = nullptr, size_t out_bytes = 0) {
    std::vector<char> bytes(sizeof(fuse_out_header) + out_bytes);
    fuse_out_header header{static_cast<uint32_t>(bytes.size()), error, unique};
    std::memcpy(bytes.data(), &header, sizeof header);
    if (out_bytes) std::memcpy(bytes.data() + sizeof header, out, out_bytes);
    if (write(device, bytes.data(), bytes.size()) < 0) std::perror("fuse answer");
  }

  template <class Out>
  static void answer_with(int device, uint64_t unique, const Out &out) {
    answer(device, unique, 0, &out, sizeof out);
  }

  static fuse_attr attr_of(uint64_t node) {
    fuse_attr a{};
    a.ino = node;
    a.mode = node == root ? S_IFDIR | 0755 : S_IFREG | 0600;
    a.nlink = 1;
    a.size = node == root ? 0 : raw::arena_bytes;
    a.uid = getuid();
    a.gid = getgid();
    return a;
  }

  static int serve(int device, pid_t rigd) {
    std::vector<char> request(FUSE_MIN_READ_BUFFER + 65536);
    for (;;) {
      ssize_t n = read(device, request.data(), request.size());
      if (n < 0 && (errno == EINTR || errno == ENOENT)) continue;
      if (n < static_cast<ssize_t>(sizeof(fuse_in_header))) return 1;
      fuse_in_header in;
      std::memcpy(&in, request.data(), sizeof in);
      const char *arg = request.data() + sizeof in;
      if (of_rigd(rigd, in.pid)) continue;
      switch (in.opcode) {
        case FUSE_INIT: {
          fuse_init_in init;
          std::memcpy(&init, arg, std::min(sizeof init, static_cast<size_t>(n) - sizeof in));
          fuse_init_out out{};
          out.major = FUSE_KERNEL_VERSION;
          out.minor = std::min<uint32_t>(init.minor, FUSE_KERNEL_MINOR_VERSION);
          out.max_readahead = init.max_readahead;
          out.max_write = 4096;
          answer_with(device, in.unique, out);
          break;
        }
        case FUSE_LOOKUP: {
          fuse_entry_out out{};
          out.nodeid = file;
          out.generation = 1;
          out.attr = attr_of(file);
          if (in.nodeid == root && std::strcmp(arg, "file") == 0)
            answer_with(device, in.unique, out);
          else
            answer(device, in.unique, -ENOENT);
          break;
        }
        case FUSE_GETATTR: {
          fuse_attr_out out{};
          out.attr = attr_of(in.nodeid);
          answer_with(device, in.unique, out);
          break;
        }
        case FUSE_OPEN: {
          fuse_open_out out{};
          out.fh = 1;
          answer_with(device, in.unique, out);
          break;
        }
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
          break;  // no answer is due
        case FUSE_FLUSH:
        case FUSE_RELEASE:
          answer(device, in.unique, 0);
          break;
        default:
          answer(device, in.unique, -ENOSYS);
      }
    }
  }

  std::string directory_;
  pid_t server_ = -1;
};

// A FUSE file system's directory in rigd's.
std::string fuse_directory(const RigdProcess &rigd) {
  std::string directory = rigd.directory + "/fuse";
  cr_assert(mkdir(directory.c_str(), 0700) == 0);
  return directory;
}

// rigd, and a file of a StuckFuse's (fd, open); skips the test where no
// FUSE file system can be mounted.
struct StuckFile {
  StuckFile() : rigd(start_guarded_rigd()), fuse(fuse_directory(rigd), rigd.pid, &why) {
    if (!fuse.mounted()) cr_skip_test("no FUSE file system can be mounted here: %s", why.c_str());
    fd = fuse.open_file();
  }
  RigdProcess rigd;
  std::string why;  // before fuse, which sets it
  StuckFuse fuse;
  int fd = -1;
};

}  // namespace

/* A descriptor of a file on a FUSE file system the client serves, which
 * answers none of rigd's calls: rigd must make no call on it that reaches
 * the file system before it sees it is not a memfd, nor close it on a
 * session's thread (a close flushes a FUSE file, through its daemon).  A
 * client passes it as a host arena and another as an export descriptor:
 * each is refused with its reason, and each client's next request is
 * answered; rigd serves a new client, and ends cleanly once the file
 * system's server goes. */
Test(hostile_descriptors, a_file_of_a_fuse_daemon_that_never_answers_holds_up_no_session, .timeout = 120) {
  StuckFile file;
  RigdProcess &rigd = file.rigd;
  StuckFuse &fuse = file.fuse;
  int stuck = file.fd;
  {
    raw::Client client(rigd.socket);
    rig_proxy_arena_reply arena = arena_of(client, stuck, raw::arena_bytes);
    cr_assert(arena.status == raw::rig_einval && why_of(arena.why).find("not a memfd") != std::string::npos,
              "a FUSE file as an arena answers RIG_EINVAL, why \"%s\", not %d", why_of(arena.why).c_str(),
              arena.status);
    cr_assert(memfd_arena_taken(client), "rigd answers the client's next request");
  }
  {
    raw::Client client(rigd.socket);
    rig_proxy_fd_reply token = token_of(client, stuck);
    cr_assert(token.status == raw::rig_einval && why_of(token.why).find("not a memfd") != std::string::npos,
              "a FUSE file as an export descriptor answers RIG_EINVAL, why \"%s\", not %d", why_of(token.why).c_str(),
              token.status);
    cr_assert(memfd_arena_taken(client), "rigd answers the client's next request");
  }
  cr_assert(well_behaved_client_passes(rigd.socket), "rigd serves a new client");
  // Before this process's own close of the file, which would flush it.
  fuse.end();
  close(stuck);
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}

/* Each descriptor waiting for its close is one of rigd's, and a client's
 * file system that never answers keeps them waiting: rigd lets at most 64
 * wait for its closer, and closes any past them on the session of the
 * client that passed it.  A client passes a file of such a server as an
 * arena again and again: it is refused each time until its own session
 * waits in a close (its 66th: one in the closer's close, 64 waiting, and
 * one on its session), and rigd then holds at most 70 descriptors more
 * than before; another client is served meanwhile; once the server goes,
 * the closes end and rigd's descriptors return to before. */
Test(hostile_descriptors, descriptors_waiting_on_a_stuck_file_system_are_bounded, .timeout = 120) {
  StuckFile file;
  RigdProcess &rigd = file.rigd;
  StuckFuse &fuse = file.fuse;
  int stuck = file.fd;
  long before = descriptors_of(rigd.pid);
  {
    raw::Client attacker(rigd.socket);
    long connected = descriptors_of(rigd.pid);
    int answered = 0;
    rig_proxy_arena_reply reply{};
    const rig_proxy_arena_request request{RIG_PROXY_MAGIC_ARENA, 0, raw::arena_bytes};
    while (answered < 200 && ask_within(attacker, request, stuck, &reply, 2000)) {
      cr_assert(reply.status == raw::rig_einval, "arena %d is refused", answered);
      ++answered;
    }
    cr_assert(answered == 66, "rigd answered %d of the client's arenas before its session waited", answered);
    long held = descriptors_of(rigd.pid) - connected;
    cr_assert(held <= 70, "rigd holds %ld descriptors more for the client's closes", held);
    cr_assert(well_behaved_client_passes(rigd.socket), "rigd serves another client");
    fuse.end();
  }
  close(stuck);
  long after = settles_at(before, [&] { return descriptors_of(rigd.pid); });
  cr_assert(after == before, "rigd holds %ld descriptors once the server went, %ld before", after, before);
  cr_assert(ended_cleanly(stop_rigd(rigd)), "rigd ends cleanly");
}
