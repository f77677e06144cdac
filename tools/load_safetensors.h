/* rig load --safetensors (load_safetensors.c). */
#ifndef RIG_TOOL_LOAD_SAFETENSORS_H
#define RIG_TOOL_LOAD_SAFETENSORS_H

#include <stdbool.h>

typedef struct safetensors_load {
  const char **paths;
  int path_count;
  const char *device;
  bool arena;  /* one buffer of each file's data, the tensors views of it */
  bool verify; /* every tensor's bytes against the file's */
} safetensors_load_t;

/* Loads every tensor of each file onto the device, printing each tensor
 * (name, dtype, shape, bytes) and the total rate; false, having said why on
 * stderr, where a header is malformed, a call fails or a byte differs. */
bool load_safetensors(const safetensors_load_t *o);

#endif
