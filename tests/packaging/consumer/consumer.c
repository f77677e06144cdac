/* A program built against an installed rig, as its users build theirs: it
 * checks that the headers and the loaded library agree on the version, then
 * round-trips bytes through a memory device's memory. */
#include <rig/rig.h>

#include <stdio.h>
#include <string.h>

static int failed(const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, rig_last_error());
  return 1;
}

int main(void) {
  if (rig_version() != RIG_VERSION) {
    fprintf(stderr, "consumer: headers %d, library %d\n", RIG_VERSION, rig_version());
    return 1;
  }
  rig_device_t *mem;
  if (rig_open("MEM:0", NULL, &mem) != RIG_OK) return failed("rig_open MEM:0");
  rig_buffer_t *on_mem;
  const char sent[] = "installed rig";
  char back[sizeof sent] = {0};
  if (rig_buffer_create(mem, sizeof sent, RIG_MEMORY_DEVICE, &on_mem) != RIG_OK) return failed("create");
  if (rig_buffer_blit_from_bytes(sent, sizeof sent, 0, on_mem, 0, sizeof sent) != RIG_OK) return failed("blit in");
  if (rig_buffer_blit_to_bytes(on_mem, 0, back, sizeof back, 0, sizeof back) != RIG_OK) return failed("blit out");
  rig_buffer_unref(on_mem);
  if (memcmp(sent, back, sizeof sent) != 0) {
    fprintf(stderr, "consumer: the bytes came back changed\n");
    return 1;
  }
  printf("consumer: ok (rig %d)\n", rig_version());
  return 0;
}
