// rig_memory_device: rig_open with the memory driver, whatever the name.
#include "registry.hpp"

using namespace rig;

extern "C" rig_status_t rig_memory_device(const char *name, rig_device_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    Driver *memory = driver_of_prefix("MEM");
    if (!memory) throw_invalid("the memory driver is not registered");
    *out = open_device(name, memory, nullptr);
    return RIG_OK;
  });
}
