#include "devices.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 16

static char names[MAX_DEVICES][64];
static int count = -1;

static void parse(void) {
  if (count >= 0) return;
  const char *list = getenv("RIG_TEST_DEVICES");
  if (!list || !*list) list = "MEM:0,MEM:1";
  count = 0;
  const char *p = list;
  while (*p && count < MAX_DEVICES) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n > 0 && n < sizeof names[0]) {
      memcpy(names[count], p, n);
      names[count][n] = 0;
      count++;
    }
    if (!end) break;
    p = end + 1;
  }
  if (count == 0) {
    strcpy(names[0], "MEM:0");
    count = 1;
  }
}

int test_device_count(void) {
  parse();
  return count;
}

const char *test_device_name(int i) {
  parse();
  return names[i % count];
}

rig_device_t *test_device(int i) {
  rig_device_t *d = NULL;
  rig_status_t s = rig_open(test_device_name(i), NULL, &d);
  cr_assert(s == RIG_OK && d != NULL, "open %s: %s", test_device_name(i),
            rig_last_error());
  return d;
}

int test_device_host_addressed(int i) {
  rig_device_t *d = test_device(i);
  if (rig_device_runs_on_host(d)) return 1;
  rig_buffer_t *b = NULL;
  if (rig_buffer_create(d, 64, RIG_MEMORY_DEVICE, &b) != RIG_OK) return 0;
  int addressed = rig_buffer_host(b) != NULL;
  rig_buffer_unref(b);
  return addressed;
}
