// Buffers that clients export for other clients to import (protocol.h,
// RIG_PROXY_OP_EXPORT and RIG_PROXY_OP_IMPORT): one table for rigd, by
// token.  An export lasts while its exporting client is connected; an
// import is a buffer of the importer's own, which outlives the export.
#pragma once

#include "account.hpp"
#include "served.hpp"
#include "shared_rows.hpp"

#include <rig/rig.h>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace rigd {

class Exports {
 public:
  explicit Exports(const ServedDevices &served) : rows_(served) {}
  ~Exports();
  Exports(const Exports &) = delete;
  Exports &operator=(const Exports &) = delete;

  // A free row of the shared-buffer table for a handle exported the first
  // time, or NULL where every row is held.
  std::shared_ptr<SharedRow> new_row() { return rows_.take(); }

  // What an export holds, and an import takes: the view, the instance whose
  // memory it is, and the exported handle's row.
  struct Shared {
    std::shared_ptr<Instance> memory;
    std::shared_ptr<SharedRow> row;
  };

  // Takes the caller's reference to view, bytes of memory that client
  // `owner` allocated on shared.memory, an instance of served device
  // `device`, and answers its token: 48 random bits, so that a client
  // cannot guess another's, then shared.row's index in the low
  // RIG_PROXY_TOKEN_ROW_BITS (protocol.h).
  uint64_t add(uint64_t owner, size_t device, rig_buffer_t *view, Shared shared);

  // A new reference to the token's buffer, which must lie on served device
  // `device`, with what it shares in *shared, for client `client` of user
  // `importer`; NULL for no such token or another device.  Tries of tokens
  // that name no export are bounded for the client first, then for its
  // user over all of its clients: past most_wrong_tokens_per_client of the
  // client's, one more every 1 / wrong_tokens_per_client_second seconds,
  // and past most_wrong_tokens of the user's, one more a second; every
  // token answers NULL to the client meanwhile, so that 48 random bits stay
  // out of reach of trying tokens in turn, and one guessing process leaves
  // the user's others most of their tries.
  rig_buffer_t *get(uint64_t token, size_t device, Shared *shared, uid_t importer, uint64_t client);

  // The tries of wrong tokens a user, and one client, may make at once,
  // and how many more each second gives back.
  static constexpr double most_wrong_tokens = 64;
  static constexpr double wrong_tokens_per_second = 1;
  static constexpr double most_wrong_tokens_per_client = 16;
  static constexpr double wrong_tokens_per_client_second = 0.25;

  // A descriptor naming the token, owner's export (rigd keeps it open
  // while the export lasts; the caller sends it and keeps nothing), or -1
  // where owner has no such export or no descriptor can be made.  A new
  // one counts in owner's account (export_fds) until the owner goes;
  // past its limits, -1 with why in *refused.
  int fd_of(uint64_t token, uint64_t owner, Account &account, std::string *refused);
  // The token fd names (one fd_of made), or 0 where it names none.  fd,
  // where a client passed it, must be sealable (passed_descriptors.hpp):
  // fstat of another file could wait on the client.
  uint64_t token_of(int fd) const;

  // Ends every export of owner, and forgets its tries of wrong tokens, as
  // its client goes.
  void remove_owner(uint64_t owner);

  // Who shared what with whom: one row for each client that imported an
  // export (importer, its id; the first most_importers_shown of them), or
  // one with importer 0 while none has.
  static constexpr size_t most_importers_shown = 256;
  struct Row {
    uint64_t exporter;
    size_t device;
    uint64_t bytes;
    uint64_t importer;
  };
  std::vector<Row> rows() const;

 private:
  struct Export {
    uint64_t owner;
    size_t device;
    rig_buffer_t *view;
    Shared shared;
    int fd = -1;  // fd_of's, once made: its inode names the export
    uint64_t fd_device = 0, fd_inode = 0;
    std::vector<uint64_t> importers;  // the clients that imported it, once each
  };
  // The tries of wrong tokens a user or a client has left, as of at.
  struct WrongTokens {
    double left;
    std::chrono::steady_clock::time_point at;
    // Gives back the tries of the time since at, up to most.
    void refill(std::chrono::steady_clock::time_point now, double most, double per_second) noexcept;
  };
  static void end(const Export &e) noexcept;
  // The tries of wrong tokens key (a user or a client) has left now, in
  // map (under mu_).
  template <class Key>
  static WrongTokens &tries_of(std::unordered_map<Key, WrongTokens> &map, Key key,
                               std::chrono::steady_clock::time_point now, double most, double per_second);
  SharedRows rows_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Export> exports_;
  std::unordered_map<uid_t, WrongTokens> wrong_tokens_;             // by user that tried one
  std::unordered_map<uint64_t, WrongTokens> client_wrong_tokens_;  // by client that tried one
};

}  // namespace rigd
