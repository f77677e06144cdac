/* The keys of a machine link's authentication (net/keys): key files that
 * only their owner reads, the agent's key ring, the client's key.
 *
 * Asserts issue #23's key rules (no rule ID in RULES.md: the spec leaves
 * the link's authentication to the implementation): a key file is a
 * regular file, opened without following links, owned by the process's
 * effective uid, with no permission for group or others, holding 32 to
 * 4096 bytes of secret (a final newline excluded); each refusal names the
 * path and the fact with its number (mode in octal, uid, size).  A key
 * ring's every file is a key named by its file name, 1-64 bytes of
 * [A-Za-z0-9._-]; another name is refused, named.
 */
#include "keys.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace rig::net;

namespace {

std::string dir;

// A directory of this test's own, mode 0700: mkdir makes it or fails
// where the name is taken, so the first free name of this process is its.
void make_dir() {
  for (int n = 0; n < 1000; n++) {
    std::string name = "/tmp/rig-auth-keys-" + std::to_string(getpid()) + "-" + std::to_string(n);
    if (mkdir(name.c_str(), 0700) == 0) {
      dir = name;
      return;
    }
    cr_assert_eq(errno, EEXIST, "mkdir %s: %s", name.c_str(), strerror(errno));
  }
  cr_assert_fail("no free directory name for the key files in /tmp");
}

void remove_dir() { std::filesystem::remove_all(dir); }

std::string secret_text(size_t size, char fill = 'k') { return std::string(size, fill); }

// Writes text to path with mode (umask aside) and answers path.
std::string write_file(const std::string &path, const std::string &text, mode_t mode = 0600) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  cr_assert_geq(fd, 0, "cannot create %s", path.c_str());
  cr_assert_eq(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  cr_assert_eq(fchmod(fd, mode), 0);
  close(fd);
  return path;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// The failure of load_key_file(path), which must fail.
std::string refusal(const std::string &path) {
  Outcome<Secret> key = load_key_file(path);
  cr_assert_not(key.ok(), "the key file %s was loaded", path.c_str());
  return key.error().message;
}

void assert_names(const std::string &message, const std::vector<std::string> &parts) {
  for (const std::string &part : parts)
    cr_assert(contains(message, part), "\"%s\" does not name \"%s\"", message.c_str(), part.c_str());
}

}  // namespace

TestSuite(key_file, .init = make_dir, .fini = remove_dir);
TestSuite(key_ring, .init = make_dir, .fini = remove_dir);

// A 0600 file of this uid: its bytes, the final newline excluded.
Test(key_file, secret_read_without_its_final_newline) {
  std::string text = "0123456789abcdef0123456789abcdef!";
  Outcome<Secret> key = load_key_file(write_file(dir + "/k", text + "\n"));
  cr_assert(key.ok(), "%s", key.ok() ? "" : key.error().message.c_str());
  cr_assert_eq(key.value().bytes().size(), text.size());
  cr_assert_eq(std::string(key.value().bytes().begin(), key.value().bytes().end()), text);
}

// Only one final newline is dropped; the bounds 32 and 4096 are secrets'.
Test(key_file, secrets_of_32_and_4096_bytes_loaded) {
  cr_assert(load_key_file(write_file(dir + "/short", secret_text(32))).ok());
  cr_assert(load_key_file(write_file(dir + "/long", secret_text(4096) + "\n")).ok());
  Outcome<Secret> two_newlines = load_key_file(write_file(dir + "/nl", secret_text(31) + "\n\n"));
  cr_assert(two_newlines.ok());
  cr_assert_eq(two_newlines.value().bytes().size(), 32u);
}

Test(key_file, mode_0644_refused_naming_the_mode) {
  std::string path = write_file(dir + "/k", secret_text(40), 0644);
  assert_names(refusal(path), {path, "mode 0644", "group or others"});
}

Test(key_file, mode_0640_refused_naming_the_mode) {
  std::string path = write_file(dir + "/k", secret_text(40), 0640);
  assert_names(refusal(path), {path, "mode 0640", "group or others"});
}

// Even a link to a good key file: a key file is opened with O_NOFOLLOW.
Test(key_file, symlink_refused) {
  std::string target = write_file(dir + "/k", secret_text(40));
  std::string link = dir + "/link";
  cr_assert_eq(symlink(target.c_str(), link.c_str()), 0);
  assert_names(refusal(link), {link, "symbolic link"});
}

Test(key_file, another_owners_file_refused_naming_the_uid) {
  if (geteuid() != 0) cr_skip_test("giving a file to uid 65534 needs root");
  std::string path = write_file(dir + "/k", secret_text(40));
  cr_assert_eq(chown(path.c_str(), 65534, 65534), 0);
  assert_names(refusal(path), {path, "uid 65534", "effective uid 0"});
}

Test(key_file, secret_of_31_bytes_refused_naming_the_size) {
  std::string path = write_file(dir + "/k", secret_text(31) + "\n");
  assert_names(refusal(path), {path, "31 bytes", "32 to 4096"});
}

Test(key_file, secret_of_4097_bytes_refused_naming_the_size) {
  std::string path = write_file(dir + "/k", secret_text(4097));
  assert_names(refusal(path), {path, "4097 bytes", "32 to 4096"});
  std::string longer = write_file(dir + "/l", secret_text(100000));
  assert_names(refusal(longer), {longer, "more than 4097 bytes"});
}

// A directory and a FIFO, which the open must not wait on.
Test(key_file, no_regular_file_refused_naming_its_type) {
  std::string sub = dir + "/sub";
  cr_assert_eq(mkdir(sub.c_str(), 0700), 0);
  assert_names(refusal(sub), {sub, "a directory", "mode 040700", "not a regular file"});
  std::string fifo = dir + "/fifo";
  cr_assert_eq(mkfifo(fifo.c_str(), 0600), 0);
  assert_names(refusal(fifo), {fifo, "a FIFO", "mode 010600"});
}

Test(key_file, missing_file_refused_naming_the_error) {
  std::string path = dir + "/absent";
  assert_names(refusal(path), {path, "errno 2"});
}

Test(key_file, client_key_id_checked) {
  std::string path = write_file(dir + "/k", secret_text(40));
  Outcome<ClientKey> key = load_client_key(path, "machine-a.1_B");
  cr_assert(key.ok());
  cr_assert_eq(key.value().id, "machine-a.1_B");
  Outcome<ClientKey> bad = load_client_key(path, "a/b");
  cr_assert_not(bad.ok());
  assert_names(bad.error().message, {path, "byte 0x2F at 1"});
}

// A moved secret leaves nothing behind in the one it left.
Test(key_file, moved_secret_leaves_the_source_empty) {
  Outcome<Secret> key = load_key_file(write_file(dir + "/k", secret_text(40)));
  cr_assert(key.ok());
  Secret moved = std::move(key.value());
  cr_assert_eq(moved.bytes().size(), 40u);
  cr_assert_eq(key.value().bytes().size(), 0u);
}

Test(key_ring, every_file_a_key_named_by_its_file) {
  write_file(dir + "/alpha", secret_text(32, 'a'));
  write_file(dir + "/Beta-2.key_x", secret_text(64, 'b') + "\n");
  Outcome<KeyRing> ring = load_key_ring(dir);
  cr_assert(ring.ok(), "%s", ring.ok() ? "" : ring.error().message.c_str());
  cr_assert_eq(ring.value().size(), 2u);
  const Secret *beta = ring.value().find("Beta-2.key_x");
  cr_assert_not_null(beta);
  cr_assert_eq(std::string(beta->bytes().begin(), beta->bytes().end()), secret_text(64, 'b'));
  cr_assert_null(ring.value().find("gamma"));
}

Test(key_ring, badly_named_file_refused_naming_it) {
  write_file(dir + "/alpha", secret_text(32));
  write_file(dir + "/bad name", secret_text(32));
  Outcome<KeyRing> ring = load_key_ring(dir);
  cr_assert_not(ring.ok());
  assert_names(ring.error().message, {dir, "\"bad name\"", "byte 0x20 at 3"});
}

Test(key_ring, name_of_65_bytes_refused_naming_it) {
  std::string name(65, 'n');
  write_file(dir + "/" + name, secret_text(32));
  Outcome<KeyRing> ring = load_key_ring(dir);
  cr_assert_not(ring.ok());
  assert_names(ring.error().message, {"\"" + name + "\"", "holds 65 bytes", "1 to 64"});
}

// A ring's key file is held to a key file's rules, named by its path.
Test(key_ring, readable_key_refused_naming_its_path) {
  write_file(dir + "/alpha", secret_text(32));
  write_file(dir + "/beta", secret_text(32), 0604);
  Outcome<KeyRing> ring = load_key_ring(dir);
  cr_assert_not(ring.ok());
  assert_names(ring.error().message, {dir + "/beta", "mode 0604"});
}

Test(key_ring, symlink_in_the_ring_refused) {
  std::string target = write_file(dir + "/alpha", secret_text(32));
  cr_assert_eq(symlink(target.c_str(), (dir + "/beta").c_str()), 0);
  Outcome<KeyRing> ring = load_key_ring(dir);
  cr_assert_not(ring.ok());
  assert_names(ring.error().message, {dir + "/beta", "symbolic link"});
}

Test(key_ring, empty_ring_refused) {
  Outcome<KeyRing> ring = load_key_ring(dir);
  cr_assert_not(ring.ok());
  assert_names(ring.error().message, {dir, "holds no key"});
}

Test(key_ring, ring_adds_each_id_once) {
  KeyRing ring;
  auto secret = [] { return std::move(Secret::of(std::vector<uint8_t>(32, 7)).value()); };
  cr_assert(ring.add("one", secret()).ok());
  Outcome<Done> again = ring.add("one", secret());
  cr_assert_not(again.ok());
  assert_names(again.error().message, {"one", "already"});
  cr_assert_not(ring.add("", secret()).ok());
}
