// The subjects of the GPU benchmarks (built where the CUDA Toolkit is found).
#include <fraglab/backends/cuda_device.hpp>
#include <fraglab/benchmarks/cuda_runtime_allocators.hpp>
#include <fraglab/benchmarks/subjects.hpp>
#include <fraglab/runtime/replay/pass_runner_of.hpp>

namespace fraglab::bench {

std::vector<subject> cuda_runtime_subjects()
{
  if (auto why = cuda_device_unavailable()) throw std::runtime_error("--cuda-baselines: " + *why);
  return {
      {"cudaMalloc", [](trace::trace const& t) { return make_pass_runner(std::make_unique<cuda_malloc_allocator>(), t); }},
      {"cudaMallocAsync", [](trace::trace const& t) { return make_pass_runner(std::make_unique<cuda_async_allocator>(), t); }},
  };
}

std::string cuda_device_name()
{
  if (cuda_device_unavailable()) return "none";
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) return "unknown";
  return prop.name;
}

}  // namespace fraglab::bench
