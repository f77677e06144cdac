// Kernels of the ROCr suite (test_rocr.c), compiled at build time by clang
// (-target amdgcn-amd-amdhsa) into an HSA code object, kernels.hsaco.  Each
// takes its parameters in the order a rig launch's parameter block lays
// them out (8-byte pointers and integers).  The index of a work-item comes
// from the dispatch packet and the group's id, so that the kernels need
// neither the device libraries nor the hidden arguments of a code object
// version (rig zeroes those).

// The work-item's index along x: the group's id times the packet's
// workgroup_size_x (a uint16_t at byte 4), plus the item's id in its group.
static long global_index(void) {
  const __constant unsigned short *packet = (const __constant unsigned short *)__builtin_amdgcn_dispatch_ptr();
  return (long)__builtin_amdgcn_workgroup_id_x() * packet[2] + (long)__builtin_amdgcn_workitem_id_x();
}

// z[i] = x[i] + y[i] for i < n.  Parameters: x at 0, y at 8, z at 16, n at 24.
__kernel void add(__global const float *x, __global const float *y, __global float *z, long n) {
  long i = global_index();
  if (i < n) z[i] = x[i] + y[i];
}

// Writes value into the n words at p.  Parameters: p at 0, value at 8, n at 16.
__kernel void fill_words(__global uint *p, uint value, long n) {
  long i = global_index();
  if (i < n) p[i] = value;
}

// Stops the queue's work with a trap: the queue breaks for good.
__kernel void trap(void) { __builtin_trap(); }
