#include "keys.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rig::net {
namespace {

std::string errno_text(int error) {
  return std::string(std::strerror(error)) + " (errno " + std::to_string(error) + ")";
}

std::string octal(unsigned mode) {
  char text[16];
  std::snprintf(text, sizeof text, "0%03o", mode);
  return text;
}

const char *file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "no regular file";
}

// name with each byte outside printable ASCII (and each backslash and
// quote) written as \xNN, quoted: a file name as a message may carry it.
std::string quoted(std::string_view name) {
  std::string text = "\"";
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      text += static_cast<char>(c);
    } else {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02X", c);
      text += escape;
    }
  }
  return text + "\"";
}

// Opens a key file, relative to dir_fd when it is not AT_FDCWD, without
// following a link or blocking on a FIFO.
int open_key(int dir_fd, const std::string &name) {
  return openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

Outcome<Secret> open_failure(const std::string &path, int error) {
  if (error == ELOOP)
    return Failure{"key file " + path + " is a symbolic link: a key file is opened without following links"};
  return Failure{"key file " + path + ": cannot open it: " + errno_text(error)};
}

// The secret of the key file open at fd (named path), which it closes.
Outcome<Secret> read_key(int fd, const std::string &path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int error = errno;
    close(fd);
    return Failure{"key file " + path + ": cannot stat it: " + errno_text(error)};
  }
  std::string fact;
  if (!S_ISREG(st.st_mode)) {
    fact = " is " + std::string(file_type(st.st_mode)) + " (mode " + octal(st.st_mode) + "), not a regular file";
  } else if (st.st_uid != geteuid()) {
    fact = " is owned by uid " + std::to_string(st.st_uid) + ", not by this process's effective uid " +
           std::to_string(geteuid());
  } else if ((st.st_mode & 077) != 0) {
    fact = " has mode " + octal(st.st_mode & 07777) +
           ", which gives group or others access: a key file's mode is 0600 or stricter";
  }
  if (!fact.empty()) {
    close(fd);
    return Failure{"key file " + path + fact};
  }
  // Room for the largest secret, its newline and one byte more, which
  // shows that the file is longer: the size read, not the size stat
  // answered, counts.
  std::vector<uint8_t> bytes(kSecretMax + 2);
  size_t size = 0;
  while (size < bytes.size()) {
    ssize_t n = read(fd, bytes.data() + size, bytes.size() - size);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      close(fd);
      OPENSSL_cleanse(bytes.data(), size);
      return Failure{"key file " + path + ": cannot read it: " + errno_text(error)};
    }
    size += static_cast<size_t>(n);
  }
  close(fd);
  if (size == bytes.size()) {
    OPENSSL_cleanse(bytes.data(), bytes.size());
    return Failure{"key file " + path + " holds more than " + std::to_string(kSecretMax + 1) +
                   " bytes: " + secret_size_problem(size)};
  }
  if (size > 0 && bytes[size - 1] == '\n') --size;
  // Shrinking keeps the buffer: no copy of the secret is left behind.
  bytes.resize(size);
  if (std::string problem = secret_size_problem(size); !problem.empty()) {
    OPENSSL_cleanse(bytes.data(), bytes.size());
    return Failure{"key file " + path + " holds a secret of " + std::to_string(size) +
                   " bytes (a final newline excluded): " + problem};
  }
  return Secret::take(std::move(bytes));
}

// The keys of directory dir, open as listing.
Outcome<KeyRing> read_ring(DIR *listing, const std::string &dir) {
  std::vector<std::string> names;
  errno = 0;
  while (const dirent *entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
    errno = 0;
  }
  if (int error = errno; error != 0) return Failure{"key ring " + dir + ": cannot list it: " + errno_text(error)};
  if (names.empty()) return Failure{"key ring " + dir + " holds no key"};
  // Files in the order of their names, so that the same ring fails the
  // same way.
  std::sort(names.begin(), names.end());
  KeyRing ring;
  for (const std::string &name : names) {
    if (std::string problem = key_id_problem(name); !problem.empty())
      return Failure{"key ring " + dir + ": file " + quoted(name) + " is not named by a key id: " + problem};
    std::string path = dir + "/" + name;
    int fd = open_key(dirfd(listing), name);
    Outcome<Secret> secret = fd < 0 ? open_failure(path, errno) : read_key(fd, path);
    if (!secret) return secret.error();
    // Never refused: a directory's names are unique.
    (void)ring.add(name, std::move(secret.value()));
  }
  return ring;
}

}  // namespace

Outcome<Secret> Secret::take(std::vector<uint8_t> &&bytes) {
  Secret secret(std::move(bytes));
  if (std::string problem = secret_size_problem(secret.bytes_.size()); !problem.empty())
    return Failure{"a secret of " + std::to_string(secret.bytes_.size()) + " bytes: " + problem};
  return secret;
}

Outcome<Secret> Secret::of(std::span<const uint8_t> bytes) {
  return take(std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

Secret::Secret(Secret &&other) noexcept : bytes_(std::move(other.bytes_)) { other.bytes_.clear(); }

Secret &Secret::operator=(Secret &&other) noexcept {
  if (this != &other) {
    wipe();
    bytes_ = std::move(other.bytes_);
    other.bytes_.clear();
  }
  return *this;
}

Secret::~Secret() { wipe(); }

void Secret::wipe() {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
  bytes_.clear();
}

std::string secret_size_problem(size_t size) {
  if (size >= kSecretMin && size <= kSecretMax) return "";
  return "a secret holds " + std::to_string(kSecretMin) + " to " + std::to_string(kSecretMax) + " bytes";
}

std::string key_id_problem(std::string_view id) {
  std::string rule = ": a key id holds 1 to " + std::to_string(kKeyIdMax) + " bytes of [A-Za-z0-9._-]";
  if (id.empty()) return "the key id is empty" + rule;
  if (id.size() > kKeyIdMax) return "the key id holds " + std::to_string(id.size()) + " bytes" + rule;
  for (size_t i = 0; i < id.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(id[i]);
    bool allowed =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!allowed) {
      char fact[64];
      std::snprintf(fact, sizeof fact, "the key id has byte 0x%02X at %zu", c, i);
      return fact + rule;
    }
  }
  return "";
}

Outcome<Secret> load_key_file(const std::string &path) {
  int fd = open_key(AT_FDCWD, path);
  if (fd < 0) return open_failure(path, errno);
  return read_key(fd, path);
}

Outcome<Done> KeyRing::add(std::string id, Secret secret) {
  if (std::string problem = key_id_problem(id); !problem.empty()) return Failure{problem};
  if (keys_.contains(id)) return Failure{"the key ring holds key id " + id + " already"};
  keys_.emplace(std::move(id), std::move(secret));
  return Done{};
}

const Secret *KeyRing::find(std::string_view id) const {
  auto key = keys_.find(id);
  return key == keys_.end() ? nullptr : &key->second;
}

Outcome<KeyRing> load_key_ring(const std::string &dir) {
  DIR *listing = opendir(dir.c_str());
  if (listing == nullptr) return Failure{"key ring " + dir + ": cannot open it: " + errno_text(errno)};
  Outcome<KeyRing> ring = read_ring(listing, dir);
  closedir(listing);
  return ring;
}

Outcome<ClientKey> load_client_key(const std::string &path, std::string id) {
  if (std::string problem = key_id_problem(id); !problem.empty()) return Failure{"key file " + path + ": " + problem};
  Outcome<Secret> secret = load_key_file(path);
  if (!secret) return secret.error();
  return ClientKey{std::move(id), std::move(secret.value())};
}

}  // namespace rig::net
