// Code linked into this process (rig.txt, Host code;
// rig_internal/elf_link.hpp), for the drivers whose launches call it on the
// host's cores: the host, and the sim, which runs its launches on its
// compute worker.  An image is a HostImage; a function's entry is its
// address.
#pragma once

#include "rig_internal/driver.hpp"
#include "rig_internal/elf_link.hpp"

namespace rig {

inline std::variant<DriverDevice::Image, std::string> link_host_image(const void *bytes, size_t n) {
  auto linked = link_host(bytes, n);
  if (auto *why = std::get_if<std::string>(&linked)) return *why;
  return static_cast<DriverDevice::Image>(std::get<std::unique_ptr<HostImage>>(linked).release());
}

// The entry of the function name: its address, both as the launch's handle
// and as what an entry ref places in the parameters.  A group may hold any
// number of threads.
inline DriverDevice::EntryAnswer host_image_entry(DriverDevice::Image image, const std::string &name) {
  void *f = static_cast<const HostImage *>(image)->resolve(name);
  if (!f) return DriverDevice::Absent{};
  return DriverDevice::Entry{f, reinterpret_cast<uint64_t>(f), INT64_MAX};
}

// The bytes of the mapping that holds the linked image and its call trampolines.
inline int64_t host_image_bytes(DriverDevice::Image image) {
  return static_cast<int64_t>(static_cast<const HostImage *>(image)->mapped_bytes());
}

inline void unload_host_image(DriverDevice::Image image) { delete static_cast<HostImage *>(image); }

}  // namespace rig
