/* The protocol's layout as C sees it (drivers/proxy/protocol.h): the
 * header is plain C, and a client in another language reads the same
 * offsets the C++ sides use.
 *
 * No rule ID: the layout is the design's (DESIGN.md "The per-host
 * service": the protocol is defined once, beside the proxy driver).
 * Asserts: each ring control word on a cache line of its own; the entry
 * and completion sizes and field offsets; the handshake's and arenas'
 * messages of fixed sizes with no padding to leak. */
#include "protocol.h"

#include <criterion/criterion.h>

#include <stddef.h>

Test(protocol_layout, ring_words_own_their_lines) {
  cr_assert_eq(offsetof(struct rig_proxy_ring_header, head), 0);
  cr_assert_eq(offsetof(struct rig_proxy_ring_header, tail), RIG_PROXY_CACHE_LINE);
  cr_assert_eq(offsetof(struct rig_proxy_ring_header, sleeping), 2 * RIG_PROXY_CACHE_LINE);
  cr_assert_eq(_Alignof(struct rig_proxy_ring_header), RIG_PROXY_CACHE_LINE);
}

Test(protocol_layout, entries_and_completions) {
  cr_assert_eq(sizeof(struct rig_proxy_entry), 64);
  cr_assert_eq(offsetof(struct rig_proxy_entry, tag), 8);
  cr_assert_eq(offsetof(struct rig_proxy_entry, args), 16);
  cr_assert_eq(offsetof(struct rig_proxy_entry, payload_offset), 48);
  cr_assert_eq(sizeof(struct rig_proxy_completion), 32);
  cr_assert_eq(offsetof(struct rig_proxy_completion, value), 16);
  cr_assert_eq(sizeof(struct rig_proxy_wait), 16);
  cr_assert_eq(sizeof(struct rig_proxy_part), 72);
  cr_assert_eq(offsetof(struct rig_proxy_part, word), offsetof(struct rig_proxy_part, src));
  cr_assert_eq(sizeof(struct rig_proxy_word), 2 * RIG_PROXY_CACHE_LINE);
  cr_assert_eq(offsetof(struct rig_proxy_word, why), 16);
}

Test(protocol_layout, messages_have_no_padding) {
  cr_assert_eq(sizeof(struct rig_proxy_hello), 8);
  cr_assert_eq(sizeof(struct rig_proxy_welcome), 16 + RIG_PROXY_WHY_BYTES);
  cr_assert_eq(sizeof(struct rig_proxy_device_record), 2 * RIG_PROXY_NAME_BYTES + 48);
  cr_assert_eq(sizeof(struct rig_proxy_arena_request), 16);
  cr_assert_eq(sizeof(struct rig_proxy_arena_reply), 16 + RIG_PROXY_WHY_BYTES);
  /* One size for every message after the handshake: rigd reads 16 bytes. */
  cr_assert_eq(sizeof(struct rig_proxy_fd_request), 16);
  cr_assert_eq(sizeof(struct rig_proxy_fd_reply), 16 + RIG_PROXY_WHY_BYTES);
  cr_assert_eq(sizeof(struct rig_proxy_ring_segment), 80);
  /* The admin channel's request starts as a hello does. */
  cr_assert_eq(sizeof(struct rig_proxy_admin_request), 24);
  cr_assert_eq(offsetof(struct rig_proxy_admin_request, version), offsetof(struct rig_proxy_hello, version));
  cr_assert_eq(sizeof(struct rig_proxy_admin_reply), 16 + RIG_PROXY_WHY_BYTES);
}

Test(protocol_layout, the_snapshot_records_have_no_padding) {
  cr_assert_eq(sizeof(struct rig_proxy_stats_header), 64);
  cr_assert_eq(sizeof(struct rig_proxy_stats_client), 40 + RIG_PROXY_NAME_BYTES + 80 + RIG_PROXY_WHY_BYTES);
  cr_assert_eq(sizeof(struct rig_proxy_stats_use), 24);
  cr_assert_eq(sizeof(struct rig_proxy_stats_device), RIG_PROXY_NAME_BYTES + 56);
  cr_assert_eq(sizeof(struct rig_proxy_stats_export), 32);
}
