// Which CUDA context each client's work runs in (cuda_contexts): the
// configuration rigd opens a client's instance of a served GPU with.
//
// A context is a GPU address space, and CUDA's faults are sticky per
// context: a trap or an illegal address breaks every stream of the
// context that ran it.  So the context is the unit of trust:
//   per_user    one context per GPU for the clients of one Linux user: their
//               kernels run concurrently, as within one MPS server, and a
//               fault of one loses that user's clients of the GPU alone;
//   per_client  a context for each client: a fault loses that client alone;
//   shared      the GPU's primary context for every client, for one trusted
//               tenant: a fault loses every client of the GPU.
// Contexts of different users time-slice the GPU; kernels of one context
// overlap.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace rigd {

enum class CudaContexts { per_user, per_client, shared };

// The policy named by text ("per_user", "per_client" or "shared"); throws
// std::invalid_argument naming the choices.
CudaContexts parse_cuda_contexts(const std::string &text);

// How rigd opens a client's instance of a served device.
struct InstanceConfig {
  std::string config;  // rig_open's configuration
  // Whether the instance may serve a later client once this one let go:
  // not one whose context is the client's alone.
  bool reusable = true;
};

// A client's trust domain, which per_user gives one context: a local
// client's Linux user ("user-UID"), or the key a remote client proved
// (rigd --listen: "key-ID"), so that remote clients of one key share a
// context, and never with a local user.
std::string user_domain(uid_t user);
std::string key_domain(const std::string &key_id);

// The configuration of the instance of served device `device` (rigd's
// name of it, such as "CUDA:0") for client number `client` of trust domain
// `domain` who asked for client_config: client_config, plus for a CUDA
// device the context that policy gives the client's trust domain.
// nullopt, with why, where client_config names a context itself: rigd
// chooses it.
std::optional<InstanceConfig> instance_config(const std::string &device, const std::string &client_config,
                                              CudaContexts policy, const std::string &domain, uint64_t client,
                                              std::string *why);

}  // namespace rigd
