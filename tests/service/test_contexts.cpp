/* Tests of the CUDA contexts rigd gives its clients' instances
 * (service/contexts.hpp, the cuda_contexts config key).
 *
 * No rule ID: the trust domains of a shared GPU are rigd's design (issue
 * #16, item 3).  Asserts: cuda_contexts parses its three choices, per_user
 * by default, and refuses others naming them; per_user gives the clients of
 * one user one context and those of two users two; per_client gives each
 * client its own, never kept for a later client; shared gives the primary
 * context (no context key) to every client; a client may not name a
 * context itself; a device other than CUDA's keeps the client's
 * configuration as it is.  The driver's side (a context of rig's own per
 * name, a fault breaking one context alone) needs a GPU: tests/gpu/cuda.sh. */
#include "config.hpp"
#include "contexts.hpp"

#include <criterion/criterion.h>

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

using namespace rigd;

namespace {

Policy config(const char *text) {
  std::istringstream in(text);
  return parse_config(in);
}

InstanceConfig opened(const char *device, const char *client_config, CudaContexts policy, uid_t user,
                      uint64_t client) {
  std::string why;
  std::optional<InstanceConfig> c = instance_config(device, client_config, policy, user_domain(user), client, &why);
  cr_assert(c.has_value(), "refused: %s", why.c_str());
  return *c;
}

}  // namespace

Test(contexts, the_key_parses_its_three_choices) {
  cr_assert(config("").cuda_contexts == CudaContexts::per_user);
  cr_assert(config("cuda_contexts = per_user").cuda_contexts == CudaContexts::per_user);
  cr_assert(config("cuda_contexts = per_client").cuda_contexts == CudaContexts::per_client);
  cr_assert(config("cuda_contexts = shared").cuda_contexts == CudaContexts::shared);
  try {
    config("cuda_contexts = per_process");
    cr_assert_fail("per_process was taken");
  } catch (const std::invalid_argument &e) {
    std::string why = e.what();
    cr_assert(why.find("line 1") != std::string::npos && why.find("per_user, per_client or shared") != std::string::npos,
              "%s", why.c_str());
  }
}

Test(contexts, per_user_shares_a_context_within_a_user_only) {
  InstanceConfig a = opened("CUDA:0", "", CudaContexts::per_user, 1000, 1);
  InstanceConfig b = opened("CUDA:0", "", CudaContexts::per_user, 1000, 2);
  InstanceConfig c = opened("CUDA:0", "", CudaContexts::per_user, 1001, 3);
  cr_assert(a.config == b.config, "%s != %s", a.config.c_str(), b.config.c_str());
  cr_assert(a.config != c.config, "two users share %s", a.config.c_str());
  cr_assert(a.config.find("context=") != std::string::npos);
  cr_assert(a.reusable && c.reusable);
  InstanceConfig tuned = opened("CUDA:0", "hang_ms=500", CudaContexts::per_user, 1000, 4);
  cr_assert(tuned.config == "hang_ms=500," + a.config, "%s", tuned.config.c_str());
}

// A remote client's trust domain is the key it proved (rigd --listen):
// clients of one key share a per_user context, never with a local user,
// even one whose uid reads like the key's id.
Test(contexts, per_user_shares_a_context_within_a_remote_key_only) {
  std::string why;
  auto of = [&](const std::string &domain, uint64_t client) {
    std::optional<InstanceConfig> c = instance_config("CUDA:0", "", CudaContexts::per_user, domain, client, &why);
    cr_assert(c.has_value(), "refused: %s", why.c_str());
    return c->config;
  };
  cr_assert(of(key_domain("lab"), 1) == of(key_domain("lab"), 2));
  cr_assert(of(key_domain("lab"), 1) != of(key_domain("ops"), 3));
  cr_assert(of(key_domain("1000"), 4) != of(user_domain(1000), 5), "%s", of(key_domain("1000"), 4).c_str());
}

Test(contexts, per_client_gives_each_client_its_own) {
  InstanceConfig a = opened("CUDA:1", "", CudaContexts::per_client, 1000, 1);
  InstanceConfig b = opened("CUDA:1", "", CudaContexts::per_client, 1000, 2);
  cr_assert(a.config != b.config && a.config.find("context=") != std::string::npos);
  cr_assert(!a.reusable && !b.reusable, "an instance of a client's own context serves no later client");
}

Test(contexts, shared_runs_every_client_in_the_primary_context) {
  InstanceConfig a = opened("CUDA:0", "", CudaContexts::shared, 1000, 1);
  InstanceConfig b = opened("CUDA:0", "", CudaContexts::shared, 1001, 2);
  cr_assert(a.config.empty() && b.config.empty() && a.reusable);
}

Test(contexts, a_client_names_no_context_itself) {
  for (const char *asked : {"context=user-0", "hang_ms=5,context=mine"}) {
    std::string why;
    cr_assert(!instance_config("CUDA:0", asked, CudaContexts::per_user, user_domain(1000), 1, &why).has_value(), "%s", asked);
    cr_assert(why.find("cuda_contexts") != std::string::npos, "%s", why.c_str());
  }
  // A key that only ends in "context" is another key.
  cr_assert(opened("CUDA:0", "no_context=1", CudaContexts::shared, 1000, 1).config == "no_context=1");
}

Test(contexts, other_devices_keep_the_clients_configuration) {
  for (CudaContexts policy : {CudaContexts::per_user, CudaContexts::per_client, CudaContexts::shared}) {
    InstanceConfig c = opened("SIM:0", "latency_us=5", policy, 1000, 7);
    cr_assert(c.config == "latency_us=5" && c.reusable);
  }
}
