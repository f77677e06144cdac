// The keys that a machine link's two ends prove they share: secrets read
// from files that only their owner may read, the agent's key ring (a
// directory of them, each named by its file) and the client's one key.
#pragma once

#include "outcome.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rig::net {

// A key's secret holds at least kSecretMin and at most kSecretMax bytes.
constexpr size_t kSecretMin = 32;
constexpr size_t kSecretMax = 4096;
// A key id (a key ring's file name) holds 1 to kKeyIdMax bytes of
// [A-Za-z0-9._-].
constexpr size_t kKeyIdMax = 64;

// A key's bytes, wiped (OPENSSL_cleanse) when dropped; moved, never copied.
class Secret {
 public:
  // bytes must hold kSecretMin to kSecretMax bytes (secret_size_problem).
  // take adopts them, wiping them when refused; of copies them.
  static Outcome<Secret> take(std::vector<uint8_t> &&bytes);
  static Outcome<Secret> of(std::span<const uint8_t> bytes);

  Secret(Secret &&other) noexcept;
  Secret &operator=(Secret &&other) noexcept;
  Secret(const Secret &) = delete;
  Secret &operator=(const Secret &) = delete;
  ~Secret();

  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  explicit Secret(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  void wipe();

  std::vector<uint8_t> bytes_;
};

// Empty when size is a secret's, otherwise what is wrong with it.
std::string secret_size_problem(size_t size);
// Empty when id is a key id, otherwise what is wrong with it.
std::string key_id_problem(std::string_view id);

// The secret of the key file at path, opened without following a link:
// refused, naming path and the fact, when it is no regular file, when its
// owner is not the process's effective uid, when its mode gives group or
// others any permission, or when its bytes (a final newline excluded) are
// not a secret's.
Outcome<Secret> load_key_file(const std::string &path);

// The agent's keys: every file of a directory is one key, named by its
// file name.
class KeyRing {
 public:
  // Adds a key; refused when id is no key id or the ring holds id already.
  Outcome<Done> add(std::string id, Secret secret);
  // The key named id, or null.
  const Secret *find(std::string_view id) const;
  size_t size() const { return keys_.size(); }

 private:
  std::map<std::string, Secret, std::less<>> keys_;
};

// The key ring of directory dir: refused, naming the file, when a file's
// name is no key id or the file is no key file (load_key_file), and when dir
// holds no key.
Outcome<KeyRing> load_key_ring(const std::string &dir);

// The client's one key: the key file it names and the key's id.
struct ClientKey {
  std::string id;
  Secret secret;
};
Outcome<ClientKey> load_client_key(const std::string &path, std::string id);

}  // namespace rig::net
