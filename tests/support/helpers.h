/* Small helpers shared by the Criterion suites.  Each fails the current test
 * (cr_assert) where its call into rig does not answer RIG_OK. */
#ifndef RIG_TEST_HELPERS_H
#define RIG_TEST_HELPERS_H

#include <rig/rig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_inject.h"

/* ---- Bytes -------------------------------------------------------------- */

/* malloc(n) (at least one byte) that fails the test where it finds no memory. */
uint8_t *allocate_bytes(int64_t n);
/* n rounded up to whole words of RIG_WORD_BYTES. */
int64_t whole_words(int64_t n);
/* Sleeps ms milliseconds, whatever signals arrive. */
void nap_ms(long ms);

/* ---- Devices ------------------------------------------------------------ */

/* rig_open(name) with no options; the device. */
rig_device_t *open_named(const char *name);
/* rig_open(name) with config as the options' config string; the device. */
rig_device_t *open_with(const char *name, const char *config);
/* Opens a device to close, under a number the calling file keeps for itself:
 * number of test device 0's driver ("SIM:41"), or "MEM:<number>" where that
 * driver opens no such name.  name receives the name. */
rig_device_t *open_closable(int number, char name[32]);
/* True iff the host addresses d's own memory (a buffer of it has a host
 * address).  The probe's memory goes back to d's driver. */
bool host_addresses(rig_device_t *d);
/* True where a and b are seen to hold one slot: their points of one value
 * are the same bits, so no call could tell them apart by slot. */
bool same_slot(const rig_device_t *a, const rig_device_t *b);

/* Asserts that d, a pointer kept past its close and many retirements
 * (rig.h, Handles), answers as a closed device: its released record's
 * "the device was closed and its record retired", or, where its memory
 * holds a later device that was closed too, "closed"; and that a close of
 * it answers nothing else. */
void assert_kept_pointer_closed(rig_device_t *d);

/* ---- Images ------------------------------------------------------------- */

/* rig_image_resolve of name, which i must have. */
rig_function_t *function_of(rig_image_t *i, const char *name);

/* ---- Buffers ------------------------------------------------------------ */

/* A buffer of n bytes of d's own memory (RIG_MEMORY_DEVICE). */
rig_buffer_t *create(rig_device_t *d, int64_t n);
/* A buffer of n bytes of d's memory of the given kind. */
rig_buffer_t *create_kind(rig_device_t *d, int64_t n, rig_memory_t kind);
/* The view of b's bytes [first, first + length). */
rig_buffer_t *view(rig_buffer_t *b, int64_t first, int64_t length);
/* The borrow of b on d, which must exist. */
rig_buffer_t *borrow(rig_device_t *d, rig_buffer_t *b);
/* The borrow of b on d, or NULL where d does not borrow it. */
rig_buffer_t *borrow_or_null(rig_device_t *d, rig_buffer_t *b);
/* rig_buffer_free(b, why)'s answer: whether it freed the memory.  Fails the
 * test where the call answers RIG_OK without writing its answer. */
bool try_free(rig_buffer_t *b, const char *why);
/* rig_buffer_unborrow(b, why)'s answer: whether it ended the borrow, which
 * the call must write, as try_free's. */
bool try_unborrow(rig_buffer_t *b, const char *why);

/* ---- Work and points ---------------------------------------------------- */

/* rig_buffer_submit_fill of b with c, waiting for no point; its point. */
rig_point_t submit_fill(rig_buffer_t *b, uint8_t c);
/* rig_buffer_submit_fill of b with c after the points waits; its point. */
rig_point_t submit_fill_after(rig_buffer_t *b, uint8_t c, const rig_point_t *waits, size_t nwaits);
/* rig_buffer_submit_copy of boxes from src to dst, waiting for no point. */
rig_point_t submit_copy(rig_buffer_t *src, rig_buffer_t *dst, const rig_box_t *boxes, size_t n);
/* submit_copy of all of src into dst, from byte 0 to byte 0. */
rig_point_t submit_copy_all(rig_buffer_t *src, rig_buffer_t *dst);
/* rig_point_reached's answer for p. */
bool point_reached(rig_point_t p);

/* ---- Host access functions (rig_buffer_read, rig_buffer_write) ---------- */

/* Reads nothing; answers 0. */
int read_nothing(void *bytes, int64_t n, void *context);
/* Writes nothing; answers 0. */
int write_nothing(void *bytes, int64_t n, void *context);
/* Answers 0 where every byte is *(const uint8_t *)context, else the index
 * of the first other byte plus 1. */
int all_bytes_are(void *bytes, int64_t n, void *context);
/* Sets every byte to *(const uint8_t *)context; answers 0. */
int set_bytes(void *bytes, int64_t n, void *context);

/* ---- Lost devices and sim devices --------------------------------------- */

/* Asserts that rig_lost(d) answers why. */
void assert_lost_with(const rig_device_t *d, const char *why);
/* Returns once the lost device d, whose stop has run, reports its last
 * submitted value (rig_signaled): it has stopped (STOP-01).  At most 5 s. */
void await_stopped(rig_device_t *d);
/* The sim's injection record of d, which d must declare. */
const rig_sim_inject_t *sim_inject(const rig_device_t *d);
/* The driver stops rig ran on the sim device d. */
int64_t sim_stops(const rig_device_t *d);
/* The driver frees rig made on the sim device d. */
int64_t sim_frees(const rig_device_t *d);
/* The sim device d's live mappings (map_host and map_peer regions rig made
 * and has not freed). */
int64_t sim_live_mappings(const rig_device_t *d);
/* Makes the work of the sim d's next value, and every later value's, fault
 * with why: work submitted from now on is work d never reaches. */
void sim_fault_next(const rig_device_t *d, const char *why);
/* Fills b on its sim d at a value that faults with why, and waits: the wait
 * answers RIG_ELOST and d is lost with why.  Returns the unreached point. */
rig_point_t lose_by_fault(rig_device_t *d, rig_buffer_t *b, const char *why);

#endif
