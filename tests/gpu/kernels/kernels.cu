// Kernels of the CUDA suite and benchmarks, compiled at build time by nvcc
// to a cubin and to PTX.  Each takes its parameters in the order a rig
// launch's parameter block lays them out (8-byte pointers and integers).

// z[i] = x[i] + y[i] for i < n.  Parameters: x at 0, y at 8, z at 16, n at 24.
extern "C" __global__ void add(const float *x, const float *y, float *z, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}

// Writes value into the n words at p.  Parameters: p at 0, value at 8, n at 16.
extern "C" __global__ void fill_words(unsigned *p, unsigned value, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

// Runs for at least cycles clock cycles.  Parameters: cycles at 0.
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Spins for ns nanoseconds of the GPU's global timer, then writes the
// timer's value as it started and as it ended into times[0] and times[1]:
// the kernel's span on the GPU's clock, comparable across kernels.
// Parameters: times at 0, ns at 8.
extern "C" __global__ void timed_spin(unsigned long long *times, long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < (unsigned long long)ns);
  times[0] = start;
  times[1] = now;
}

// Does nothing: the launch overhead.
extern "C" __global__ void empty() {}

// Stops the GPU's work with an error: the context breaks for good.
extern "C" __global__ void trap() { asm volatile("trap;"); }
