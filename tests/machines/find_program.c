#include "find_program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The executable name in one of the ':'-separated directories of dirs. */
static bool find_in(const char *name, const char *dirs, char *path, size_t size) {
  while (dirs && *dirs) {
    size_t length = strcspn(dirs, ":");
    if (length > 0) {
      int n = snprintf(path, size, "%.*s/%s", (int)length, dirs, name);
      if (n > 0 && (size_t)n < size && access(path, X_OK) == 0) return true;
    }
    dirs += length;
    if (*dirs == ':') dirs++;
  }
  return false;
}

bool find_program(const char *name, const char *dirs, char *path, size_t size) {
  return find_in(name, dirs, path, size) || find_in(name, getenv("PATH"), path, size);
}
