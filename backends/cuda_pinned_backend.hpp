// Page-locked host memory from cudaHostAlloc / cudaFreeHost, for pinned host pools (TF's
// gpu_host_bfc allocator, PyTorch's CachingHostAllocator): one allocation per acquisition,
// page-aligned, never merged. The limit is in bytes; a fraction of device memory means
// nothing for host memory.
#pragma once

#include <fraglab/backends/detail/cuda_block_backend.hpp>

#include <cuda_runtime_api.h>

#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace fraglab {

struct cuda_pinned_backend_params {
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  std::size_t granularity = 4096;
  // cudaHostAllocPortable: pinned for every context, as a pool shared by all devices must be.
  unsigned flags = cudaHostAllocPortable;
};

namespace detail {

struct cuda_host_alloc_source {
  static constexpr std::string_view name = "cuda_pinned";
  static constexpr std::size_t guaranteed_alignment = 4096;
  unsigned flags;
  cudaError_t allocate(void** p, std::size_t n) { return cudaHostAlloc(p, n, flags); }
  cudaError_t deallocate(void* p) { return cudaFreeHost(p); }
  [[nodiscard]] std::string call(std::size_t n) const
  {
    return "cudaHostAlloc(" + std::to_string(n) + " bytes, flags " + std::to_string(flags) + ")";
  }
  [[nodiscard]] static int device() noexcept { return -1; }
};

}  // namespace detail

class cuda_pinned_backend : public detail::cuda_block_backend<detail::cuda_host_alloc_source> {
 public:
  using params = cuda_pinned_backend_params;
  explicit cuda_pinned_backend(params p = {})
      : cuda_block_backend(std::make_unique<detail::cuda_host_alloc_source>(detail::cuda_host_alloc_source{p.flags}),
                           p.capacity, p.granularity)
  {
  }
};

static_assert(backend<cuda_pinned_backend>);

}  // namespace fraglab
