/* The signal masks rig makes (mask_calls.h). */
#define _GNU_SOURCE

#include "mask_calls.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

static _Thread_local uint64_t calls;

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  static int (*real)(int, const sigset_t *, sigset_t *);
  if (!real) real = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT, "pthread_sigmask");
  calls++;
  return real(how, set, old);
}

uint64_t mask_calls(void) { return calls; }
