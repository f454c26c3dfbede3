// CUDA's own allocators behind the engine's allocate/deallocate interface, so that the
// replay loop that drives a preset over the cuda backend drives them unchanged:
//   cuda_malloc_allocator   cudaMalloc / cudaFree for every block: what a program without a
//                           caching allocator pays;
//   cuda_async_allocator    cudaMallocAsync / cudaFreeAsync on one stream, from the device's
//                           default memory pool with its release threshold raised so that
//                           it caches (CUDA's stream-ordered allocator as RMM and
//                           PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync use it).
// What is timed is the host-side cost of each call: the latency an allocator adds to the
// path that launches a training step's kernels.
#pragma once

#include <fraglab/backends/detail/cuda_error.hpp>
#include <fraglab/engine/results.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>

namespace fraglab::bench {

class cuda_malloc_allocator {
 public:
  allocation allocate(std::size_t size, std::size_t /*alignment*/ = 1, std::uint64_t /*stream*/ = 0)
  {
    void* p = nullptr;
    cudaError_t const e = cudaMalloc(&p, size);
    if (e == cudaSuccess) return {reinterpret_cast<std::uintptr_t>(p), size, alloc_status::ok};
    (void)detail::refusal_or_throw(e, "cudaMalloc");
    return {0, 0, alloc_status::backend_refused};
  }

  free_status deallocate(std::uintptr_t address)
  {
    detail::check_runtime(cudaFree(reinterpret_cast<void*>(address)), "cudaFree");
    return free_status::ok;
  }
};

class cuda_async_allocator {
 public:
  cuda_async_allocator()
  {
    int device = 0;
    detail::check_runtime(cudaGetDevice(&device), "cudaGetDevice");
    detail::check_runtime(cudaDeviceGetDefaultMemPool(&pool_, device), "cudaDeviceGetDefaultMemPool");
    std::uint64_t keep_everything = std::numeric_limits<std::uint64_t>::max();
    detail::check_runtime(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_everything),
                          "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
    detail::check_runtime(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  cuda_async_allocator(cuda_async_allocator const&) = delete;
  cuda_async_allocator& operator=(cuda_async_allocator const&) = delete;
  ~cuda_async_allocator()
  {
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
    (void)cudaMemPoolTrimTo(pool_, 0);
  }

  allocation allocate(std::size_t size, std::size_t /*alignment*/ = 1, std::uint64_t /*stream*/ = 0)
  {
    void* p = nullptr;
    cudaError_t const e = cudaMallocAsync(&p, size, stream_);
    if (e == cudaSuccess) return {reinterpret_cast<std::uintptr_t>(p), size, alloc_status::ok};
    (void)detail::refusal_or_throw(e, "cudaMallocAsync");
    return {0, 0, alloc_status::backend_refused};
  }

  free_status deallocate(std::uintptr_t address)
  {
    detail::check_runtime(cudaFreeAsync(reinterpret_cast<void*>(address), stream_), "cudaFreeAsync");
    return free_status::ok;
  }

 private:
  cudaMemPool_t pool_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace fraglab::bench
