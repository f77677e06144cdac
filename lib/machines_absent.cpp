// rig_machine_connect where rig was built without machines (no UCX or
// OpenSSL: net/CMakeLists.txt): every connect answers RIG_EOPEN.
#include "rig_internal/errors.hpp"

#include <rig/service.h>

using namespace rig;

extern "C" rig_status_t rig_machine_connect(const char *address, const rig_machine_options_t *,
                                            rig_machine_t **machine) {
  RIG_API_CALL({
    if (machine) *machine = nullptr;
    require(address != nullptr, "address is NULL");
    throw_open("rig was built without machines");
  });
}
