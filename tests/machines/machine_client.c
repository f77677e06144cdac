#include "machine_client.h"

rig_machine_t *machine_connect(const struct machine_agent *a, const char *name, const char *key_file,
                               uint32_t bound_ms) {
  machine_agent_environment(a->hosts, TWO_HOSTS_B);
  rig_machine_options_t options = {
      .size = sizeof options, .name = name, .key_file = key_file, .transports = "tcp", .failure_bound_ms = bound_ms};
  rig_machine_t *m = NULL;
  rig_status_t status = rig_machine_connect(a->address, &options, &m);
  if (status == RIG_OK && m) return m;
  fprintf(stderr, "rig_machine_connect(%s, key %s) answered %s: %s\n", a->address, key_file,
          rig_status_name(status), rig_last_error());
  return NULL;
}

rig_device_t *machine_open(rig_machine_t *m, const char *name, const char *config) {
  rig_open_options_t options = {sizeof options, config};
  rig_device_t *d = NULL;
  rig_status_t status = rig_machine_open(m, name, config ? &options : NULL, &d);
  if (status == RIG_OK && d) return d;
  fprintf(stderr, "rig_machine_open(%s, %s) answered %s: %s\n", name, config ? config : "no config",
          rig_status_name(status), rig_last_error());
  return NULL;
}

rig_device_t *machine_device(const struct machine_agent *a, const char *machine, const char *device) {
  rig_machine_t *m = machine_connect(a, machine, a->good_key_file, 0);
  return m ? machine_open(m, device, NULL) : NULL;
}

int machine_runs_work(rig_device_t *d, uint8_t byte, const char *what) {
  rig_buffer_t *b = NULL;
  EXPECT(rig_buffer_create(d, 4096, RIG_MEMORY_DEVICE, &b) == RIG_OK, "%s: a buffer: %s", what, rig_last_error());
  EXPECT(rig_buffer_fill(b, byte) == RIG_OK, "%s: a fill: %s", what, rig_last_error());
  uint8_t seen[4096];
  EXPECT(rig_buffer_blit_to_bytes(b, 0, seen, sizeof seen, 0, sizeof seen) == RIG_OK, "%s: the read: %s", what,
         rig_last_error());
  rig_buffer_unref(b);
  for (size_t i = 0; i < sizeof seen; i++)
    EXPECT(seen[i] == byte, "%s: byte %zu is 0x%02x, not 0x%02x", what, i, seen[i], byte);
  return 0;
}

int machine_serves_a_client(const struct machine_agent *a, const char *machine, uint8_t byte, const char *what) {
  rig_device_t *d = machine_device(a, machine, "MEM:0");
  EXPECT(d, "%s: no MEM:0@%s (above)", what, machine);
  return machine_runs_work(d, byte, what);
}
