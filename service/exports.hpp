// Buffers that clients export for other clients to import (protocol.h,
// RIG_PROXY_OP_EXPORT and RIG_PROXY_OP_IMPORT): one table for rigd, by
// token.  An export lasts while its exporting client is connected; an
// import is a buffer of the importer's own, which outlives the export.
#pragma once

#include "served.hpp"

#include <rig/rig.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace rigd {

class Exports {
 public:
  Exports() = default;
  ~Exports();
  Exports(const Exports &) = delete;
  Exports &operator=(const Exports &) = delete;

  // Takes the caller's reference to view, bytes of memory that client
  // `owner` allocated on `memory`, an instance of served device `device`,
  // and answers its token: 64 random bits, never 0, so that a client cannot
  // guess another's.
  uint64_t add(uint64_t owner, size_t device, rig_buffer_t *view, std::shared_ptr<Instance> memory);

  // A new reference to the token's buffer, which must lie on served device
  // `device`, and its instance in *memory; NULL for no such token or
  // another device.
  rig_buffer_t *get(uint64_t token, size_t device, std::shared_ptr<Instance> *memory) const;

  // Ends every export of owner, as its client goes.
  void remove_owner(uint64_t owner);

 private:
  struct Export {
    uint64_t owner;
    size_t device;
    rig_buffer_t *view;
    std::shared_ptr<Instance> memory;
  };
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Export> exports_;
};

}  // namespace rigd
