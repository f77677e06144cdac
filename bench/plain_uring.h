/* The io benchmarks' baseline: a plain liburing O_DIRECT reader or writer,
 * PLAIN_URING_DEPTH requests of PLAIN_URING_BLOCK bytes in flight, each
 * straight between the file and the caller's memory, which it registers
 * as fixed buffers where the system allows.  What fio does with
 * ioengine=io_uring, direct=1, bs=1M, iodepth=32, in a few lines. */
#ifndef RIG_BENCH_PLAIN_URING_H
#define RIG_BENCH_PLAIN_URING_H

#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define PLAIN_URING_BLOCK ((int64_t)1 << 20)
#define PLAIN_URING_DEPTH 32

typedef struct plain_uring {
  struct io_uring ring;
  int fd;          /* the file, O_DIRECT */
  uint8_t *memory; /* size bytes, page-aligned */
  int64_t size;    /* whole blocks */
  bool write;
  bool fixed;      /* memory registered as fixed buffers */
} plain_uring_t;

/* Makes the ring, and registers the size bytes at memory (page-aligned,
 * whole blocks) as its fixed buffers where the system allows: once, before
 * any timing, as fio does at its start. */
static inline void plain_uring_init(plain_uring_t *u, uint8_t *memory, int64_t size) {
  if ((uintptr_t)memory % 4096 != 0 || size <= 0 || size % PLAIN_URING_BLOCK != 0)
    bench_fail("plain_uring: memory must start on a page and hold whole blocks");
  *u = (plain_uring_t){.fd = -1, .memory = memory, .size = size};
  if (io_uring_queue_init(PLAIN_URING_DEPTH, &u->ring, 0) != 0) bench_fail("io_uring_queue_init failed");
  int64_t blocks = size / PLAIN_URING_BLOCK;
  struct iovec *iovecs = malloc((size_t)blocks * sizeof *iovecs);
  if (!iovecs) bench_fail("malloc failed");
  for (int64_t b = 0; b < blocks; b++) iovecs[b] = (struct iovec){memory + b * PLAIN_URING_BLOCK, PLAIN_URING_BLOCK};
  int status = io_uring_register_buffers(&u->ring, iovecs, (unsigned)blocks);
  u->fixed = status == 0;
  if (!u->fixed) printf("note: plain uring could not register its buffers (%s); it runs without\n", strerror(-status));
  free(iovecs);
}

/* Opens path O_DIRECT for reading, or writing where write; fails the
 * benchmark where the file system refuses O_DIRECT. */
static inline void plain_uring_open(plain_uring_t *u, const char *path, bool write) {
  u->write = write;
  u->fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC);
  if (u->fd < 0) bench_fail("the file system refuses O_DIRECT: no baseline");
}

static inline void plain_uring_close(plain_uring_t *u) {
  close(u->fd);
  u->fd = -1;
}

static inline void plain_uring_queue(plain_uring_t *u, int64_t at) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
  if (!sqe) bench_fail("io_uring_get_sqe found no room");
  uint8_t *p = u->memory + at;
  const int index = (int)(at / PLAIN_URING_BLOCK);
  if (u->write && u->fixed)
    io_uring_prep_write_fixed(sqe, u->fd, p, PLAIN_URING_BLOCK, (uint64_t)at, index);
  else if (u->write)
    io_uring_prep_write(sqe, u->fd, p, PLAIN_URING_BLOCK, (uint64_t)at);
  else if (u->fixed)
    io_uring_prep_read_fixed(sqe, u->fd, p, PLAIN_URING_BLOCK, (uint64_t)at, index);
  else
    io_uring_prep_read(sqe, u->fd, p, PLAIN_URING_BLOCK, (uint64_t)at);
  io_uring_sqe_set_data64(sqe, (uint64_t)at);
}

/* Moves all size bytes between the open file and memory, from byte 0 of
 * each; a short or failed request fails the benchmark. */
static inline void plain_uring_move(plain_uring_t *u) {
  int64_t next = 0, done = 0;
  int in_flight = 0;
  while (done < u->size) {
    while (in_flight < PLAIN_URING_DEPTH && next < u->size) {
      plain_uring_queue(u, next);
      next += PLAIN_URING_BLOCK;
      in_flight++;
    }
    if (io_uring_submit_and_wait(&u->ring, 1) < 0) bench_fail("io_uring_submit_and_wait failed");
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&u->ring, head, cqe) {
      if (cqe->res != PLAIN_URING_BLOCK) {
        fprintf(stderr, "plain uring: %s at %llu: %s\n", u->write ? "write" : "read",
                (unsigned long long)io_uring_cqe_get_data64(cqe), cqe->res < 0 ? strerror(-cqe->res) : "short");
        exit(1);
      }
      seen++;
    }
    io_uring_cq_advance(&u->ring, seen);
    in_flight -= (int)seen;
    done += (int64_t)seen * PLAIN_URING_BLOCK;
  }
}

static inline void plain_uring_exit(plain_uring_t *u) {
  if (u->fixed) io_uring_unregister_buffers(&u->ring);
  io_uring_queue_exit(&u->ring);
}

#endif
