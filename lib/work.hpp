// Work on a device: the next value of its timeline for parts that use
// allocations, ordered after the points their memory's stamps hold.
#pragma once

#include "allocation.hpp"

#include <initializer_list>
#include <vector>

namespace rig {

struct Use {
  Allocation *alloc;
  bool write;
};

// Submits the parts as d's next value: after the dependencies of uses and
// the points of waits (on d's queue where its driver waits on words, else
// on the host), then adds (d, value) to the stamps of every use.  Returns
// the value.  Throws RIG_ELOST, RIG_EINVAL (work no submission holds),
// RIG_ENOMEM (queues that cannot grow).
// Allocates nothing once the calling thread's scratch has grown to the
// work's size, unless it waits or the queues grow.
uint64_t submit_work(rig_device_t *d, const rig_edge_part_t *parts, size_t nparts, const Use *uses, size_t nuses,
                     const rig_point_t *waits, size_t nwaits);
inline uint64_t submit_work(rig_device_t *d, std::initializer_list<rig_edge_part_t> parts,
                            std::initializer_list<Use> uses, const rig_point_t *waits, size_t nwaits) {
  return submit_work(d, parts.begin(), parts.size(), uses.begin(), uses.size(), waits, nwaits);
}

// Resolves the caller's points into dependencies; throws RIG_ELOST for a
// point a lost device never reached, RIG_EINVAL for one never submitted.
void point_dependencies(const rig_point_t *waits, size_t nwaits, std::vector<Dependency> &out);

// The host's next value, for work the host has done.
uint64_t host_value();

}  // namespace rig
