// Device memory from cudaMalloc / cudaFree: one allocation per acquisition, as TF's BFC
// (GPUcudaMallocAllocator) and PyTorch's caching allocator grow their pools. cudaMalloc
// aligns to 256 bytes, and every block is a separate range: acquisitions never merge.
//
// A refusal (cudaErrorMemoryAllocation) is an empty acquisition with the CUDA text kept in
// last_error(); any other CUDA error throws cuda_error (detail/cuda_error.hpp).
#pragma once

#include <fraglab/backends/cuda_device.hpp>
#include <fraglab/backends/detail/cuda_block_backend.hpp>

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <string_view>

namespace fraglab {

struct cuda_backend_params {
  int device = 0;
  device_memory_limit limit;
  std::size_t granularity = 256;  // cudaMalloc's alignment; PyTorch's presets ask for 2 MiB
};

namespace detail {

struct cuda_malloc_source {
  static constexpr std::string_view name = "cuda";
  static constexpr std::size_t guaranteed_alignment = 256;
  int device_id;
  cudaError_t allocate(void** p, std::size_t n) { return cudaMalloc(p, n); }
  cudaError_t deallocate(void* p) { return cudaFree(p); }
  [[nodiscard]] std::string call(std::size_t n) const
  {
    return "cudaMalloc(" + std::to_string(n) + " bytes) on device " + std::to_string(device_id);
  }
  [[nodiscard]] int device() const noexcept { return device_id; }
};

}  // namespace detail

class cuda_backend : public detail::cuda_block_backend<detail::cuda_malloc_source> {
 public:
  using params = cuda_backend_params;
  explicit cuda_backend(params p = {})
      : cuda_block_backend(std::make_unique<detail::cuda_malloc_source>(detail::cuda_malloc_source{p.device}),
                           resolve_device_limit(p.limit, p.device), p.granularity)
  {
  }
};

static_assert(backend<cuda_backend>);

}  // namespace fraglab
