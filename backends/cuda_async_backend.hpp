// Device memory from CUDA's stream-ordered allocator: cudaMallocFromPoolAsync /
// cudaFreeAsync on a memory pool of the backend's own (cudaMemPoolCreate), so that its
// release threshold and its statistics belong to this backend alone and the device's
// default pool, which the program may use, is left as it was.
//
// The engine hands memory to callers on any stream, so each acquisition waits for the
// backend's stream before it is used. A release synchronizes the device first: the engine
// gives back only regions with no live block, but kernels that used them may still be
// running on other streams, and cudaFree would have waited for them too.
//
// The pool keeps freed memory up to `release_threshold` bytes (by default everything, so
// the pool caches like the allocators it is compared with).
#pragma once

#include <fraglab/backends/cuda_device.hpp>
#include <fraglab/backends/detail/cuda_block_backend.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace fraglab {

struct cuda_async_backend_params {
  int device = 0;
  device_memory_limit limit;
  std::size_t granularity = 256;
  std::uint64_t release_threshold = std::numeric_limits<std::uint64_t>::max();
};

namespace detail {

class cuda_pool_source {
 public:
  static constexpr std::string_view name = "cuda_async";
  static constexpr std::size_t guaranteed_alignment = 256;

  explicit cuda_pool_source(cuda_async_backend_params const& p) : device_id_(p.device)
  {
    cuda_device_scope const on(device_id_);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_id_;
    check_runtime(cudaMemPoolCreate(&pool_, &props), "cudaMemPoolCreate on device " + std::to_string(device_id_));
    std::uint64_t threshold = p.release_threshold;
    check_runtime(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold),
                  "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
    check_runtime(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  cuda_pool_source(cuda_pool_source const&) = delete;
  cuda_pool_source& operator=(cuda_pool_source const&) = delete;
  ~cuda_pool_source()
  {
    // Errors are ignored: at process exit the runtime may already be unloading.
    if (stream_ != nullptr) {
      (void)cudaStreamSynchronize(stream_);
      (void)cudaStreamDestroy(stream_);
    }
    if (pool_ != nullptr) (void)cudaMemPoolDestroy(pool_);
  }

  cudaError_t allocate(void** p, std::size_t n)
  {
    cudaError_t const e = cudaMallocFromPoolAsync(p, n, pool_, stream_);
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream_);
  }
  cudaError_t deallocate(void* p)
  {
    cudaError_t const e = cudaDeviceSynchronize();
    return e != cudaSuccess ? e : cudaFreeAsync(p, stream_);
  }
  [[nodiscard]] std::string call(std::size_t n) const
  {
    return "cudaMallocFromPoolAsync(" + std::to_string(n) + " bytes) on device " + std::to_string(device_id_);
  }
  [[nodiscard]] int device() const noexcept { return device_id_; }
  [[nodiscard]] cudaMemPool_t pool() const noexcept { return pool_; }

 private:
  int device_id_;
  cudaMemPool_t pool_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace detail

class cuda_async_backend : public detail::cuda_block_backend<detail::cuda_pool_source> {
 public:
  using params = cuda_async_backend_params;
  explicit cuda_async_backend(params p = {})
      : cuda_block_backend(std::make_unique<detail::cuda_pool_source>(p), resolve_device_limit(p.limit, p.device),
                           p.granularity)
  {
  }
  // Bytes the pool holds from the device, cached ones included (cudaMemPoolAttrReservedMemCurrent).
  [[nodiscard]] std::uint64_t pool_reserved_bytes()
  {
    std::uint64_t v = 0;
    detail::check_runtime(cudaMemPoolGetAttribute(source().pool(), cudaMemPoolAttrReservedMemCurrent, &v),
                          "cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent)");
    return v;
  }
};

static_assert(backend<cuda_async_backend>);

}  // namespace fraglab
