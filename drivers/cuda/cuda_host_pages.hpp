// Host memory registered with CUDA (cuMemHostRegister) for the GPUs' work,
// shared by every CUDA device of the process: a range can be registered
// once, and a PORTABLE registration maps it for every context.  Each
// holder counts; the last release unregisters it.
#pragma once

#include "cuda_api.h"

#include <optional>
#include <string>

namespace rig::cu {

// The bytes of a page of host memory.
size_t host_page_bytes();

// The device address of the n bytes at p, registered (PORTABLE, DEVICEMAP)
// in the calling thread's current context or held from an earlier
// registration that covers them.  nullopt, with the reason in *why, where
// CUDA refuses them (pages mapped read-only, no memory to lock them) or
// they overlap a registration without lying inside it.
std::optional<DevicePtr> hold_host_pages(const Api &api, void *p, size_t n, std::string *why);

// Drops a hold of hold_host_pages(p, ...): unregisters the range once no
// holder remains.  A range of a forgotten context is gone already.
void release_host_pages(const Api &api, void *p);

// Forgets the registrations made in context, which CUDA destroyed with it.
void forget_host_pages(Context context);

}  // namespace rig::cu
