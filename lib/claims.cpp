// Claims: read claims, holds that may take memory exclusive, consumption,
// and the early returns free and unborrow.
#include "buffer.hpp"

using namespace rig;

namespace {

// Counts a claim of kind k on b's memory and on the borrow it goes
// through.  With the allocation's lock held.
void add_claim(rig_buffer_t *b, ClaimKind k) {
  b->alloc->claims[k]++;
  if (b->borrow) b->borrow->claims[k]++;
}

// Ends a claim of kind k on b's memory: false where none is held.  With
// the allocation's lock held.
bool end_claim(rig_buffer_t *b, ClaimKind k) {
  int &held = b->alloc->claims[k];
  if (held == 0) return false;
  held--;
  if (b->borrow && b->borrow->claims[k] > 0) b->borrow->claims[k]--;
  return true;
}

void refuse_exclusive(const Allocation *a) {
  if (a->exclusive) throw_invalid("a hold takes the buffer's memory exclusive");
}

// Makes every buffer over b's bytes made until now dead with why: all of
// the memory's buffers where b spans it, and only those inside b's bytes
// where it does not.  With the allocation's lock held.
void consume(rig_buffer_t *b, const char *why, const char *fallback) {
  Allocation *a = b->alloc;
  a->deaths.push_back(std::make_unique<const Death>(Death{why ? why : fallback, b->offset, b->offset + b->length}));
  a->generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace

namespace rig {

void require_not_exclusive(const rig_buffer_t *b) {
  Guard g(b->alloc->mu);
  refuse_exclusive(b->alloc);
}

void take_claim(rig_buffer_t *b, ClaimKind k) {
  Guard g(b->alloc->mu);
  refuse_exclusive(b->alloc);
  add_claim(b, k);
}

void drop_claim(rig_buffer_t *b, ClaimKind k) {
  Guard g(b->alloc->mu);
  end_claim(b, k);
}

ReadClaim::ReadClaim(rig_buffer_t *b) : b_(b) { claim_read(b); }

ReadClaim::~ReadClaim() { release_read(b_); }

}  // namespace rig

extern "C" {

rig_claim_t rig_buffer_claim(rig_buffer_t *b, rig_access_t access) {
  if (!live_handle(b) || (access != RIG_ACCESS_READ && access != RIG_ACCESS_READ_WRITE)) return RIG_CLAIM_INVALID;
  if (dead_reason(b)) return RIG_CLAIM_DEAD;
  if (access == RIG_ACCESS_READ_WRITE && access_of(b) == RIG_ACCESS_READ) return RIG_CLAIM_READ_ONLY;
  {
    Guard g(b->alloc->mu);
    if (b->alloc->exclusive) return RIG_CLAIM_EXCLUSIVE;
    add_claim(b, ClaimKind::Read);
  }
  try {
    return stamps_reached(b->alloc, access == RIG_ACCESS_READ_WRITE) ? RIG_CLAIMED : RIG_CLAIM_WAIT;
  } catch (...) {
    // A lost device the access depends on: rig_buffer_wait answers it.
    return RIG_CLAIM_WAIT;
  }
}

void rig_buffer_release(rig_buffer_t *b) {
  if (!live_handle(b)) return;
  release_read(b);
}

rig_status_t rig_claim_begin(rig_buffer_t *b, bool *exclusive) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(exclusive != nullptr, "exclusive is NULL");
    *exclusive = false;
    require_buffer(b, "the buffer");
    Allocation *a = b->alloc;
    require(!a->outside_claims.load(), "the buffer's memory is outside the claims");
    // A hold depends on what a write would.
    std::vector<Dependency> deps;
    dependencies(a, true, nullptr, deps);
    Guard g(a->mu);
    refuse_exclusive(a);
    // Only a hold of all of the memory, by its only claim, is exclusive.
    *exclusive = rig_buffer_spans(b) && !a->claims.any();
    add_claim(b, ClaimKind::With);
    a->exclusive = *exclusive;
    return RIG_OK;
  });
}

rig_status_t rig_claim_end(rig_buffer_t *b) {
  RIG_API_CALL({
    require_handle(b, "the buffer");
    Guard g(b->alloc->mu);
    require(end_claim(b, ClaimKind::With), "no hold holds the buffer's memory");
    // An exclusive hold was the memory's only claim.
    b->alloc->exclusive = false;
    return RIG_OK;
  });
}

rig_status_t rig_claim_consume(rig_buffer_t *b, const char *why, rig_buffer_t **out) {
  RIG_API_CALL({
    require(out != nullptr, "out is NULL");
    *out = nullptr;
    require_buffer(b, "the buffer");
    Allocation *a = b->alloc;
    auto *fresh = new rig_buffer();
    {
      Guard g(a->mu);
      if (a->claims[ClaimKind::With] == 0) {
        delete fresh;
        throw_invalid("no hold holds the buffer's memory");
      }
      consume(b, why, "consumed");
      // The result admits only Read unless the hold was exclusive; the
      // memory stays held, no longer exclusive.
      fresh->read_only = !a->exclusive || b->read_only;
      a->exclusive = false;
      ref(a);
      fresh->alloc = a;
      fresh->device = b->device;
      fresh->offset = b->offset;
      fresh->length = b->length;
      fresh->borrowed = b->borrowed;
      fresh->generation = a->generation.load();
    }
    if (b->borrow) fresh->borrow = rig_buffer_ref(b->borrow);
    *out = fresh;
    return RIG_OK;
  });
}

rig_status_t rig_claim_hold(rig_buffer_t *b) {
  RIG_API_CALL({
    require_buffer(b, "the buffer");
    take_hold(b);
    return RIG_OK;
  });
}

rig_status_t rig_claim_unhold(rig_buffer_t *b) {
  RIG_API_CALL({
    require_handle(b, "the buffer");
    Guard g(b->alloc->mu);
    require(end_claim(b, ClaimKind::Hold), "no hold of rig_claim_hold holds the buffer's memory");
    return RIG_OK;
  });
}

rig_status_t rig_claim_share(rig_buffer_t *b) {
  RIG_API_CALL({
    require_buffer(b, "the buffer");
    Guard g(b->alloc->mu);
    refuse_exclusive(b->alloc);
    b->alloc->outside_claims.store(true);
    return RIG_OK;
  });
}

rig_status_t rig_buffer_free(rig_buffer_t *b, const char *why, bool *freed) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(freed != nullptr, "freed is NULL");
    *freed = false;
    require_buffer(b, "the buffer");
    Allocation *a = b->alloc;
    if (!rig_buffer_spans(b) || a->outside_claims.load()) return RIG_OK;
    {
      Guard g(a->mu);
      if (a->claims.any()) return RIG_OK;
      consume(b, why, "freed");
    }
    collect_early(a);
    *freed = true;
    return RIG_OK;
  });
}

rig_status_t rig_buffer_unborrow(rig_buffer_t *b, const char *why, bool *ended) {
  RIG_API_CALL({
    refuse_inside_lock();
    require(ended != nullptr, "ended is NULL");
    *ended = false;
    require_buffer(b, "the buffer");
    rig_buffer_t *root = b->borrow;
    require(root != nullptr && root->device != b->alloc->owner, "the buffer is not a borrow on another device");
    require(b->offset == root->offset && b->length == root->length, "the buffer is a view of part of a borrow");
    Mapping *m;
    {
      Guard g(b->alloc->mu);
      if (root->claims.any()) return RIG_OK;
      if (root->unborrowed.load()) throw_invalid("the borrow has ended");
      root->unborrowed.store(new std::string(why ? why : "unborrowed"), std::memory_order_release);
      m = root->mapping;
      root->mapping = nullptr;
    }
    // The borrow's hold of its mapping ends as at its collection.
    if (m) release_mapping(b->alloc, m);
    *ended = true;
    return RIG_OK;
  });
}

}  // extern "C"
