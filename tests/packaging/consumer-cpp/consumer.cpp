// rig.hpp from an install: typed host access on a memory device's buffer.
#include <rig/rig.hpp>

#include <cstdio>
#include <numeric>

int main() {
  rig::buffer b = rig::buffer::create(rig::device::open("MEM:0"), 1024 * sizeof(float));
  b.write_as<float>([](std::span<float> v) { std::iota(v.begin(), v.end(), 0.0f); });
  double sum = 0;
  b.read_as<float>([&](std::span<const float> v) { sum = std::accumulate(v.begin(), v.end(), 0.0); });
  if (sum != 1023.0 * 1024.0 / 2.0) {
    std::fprintf(stderr, "consumer_cpp: sum %f\n", sum);
    return 1;
  }
  std::printf("consumer_cpp: ok\n");
  return 0;
}
