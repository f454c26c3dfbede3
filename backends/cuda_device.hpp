// What the CUDA backends share: which device they serve, how much of it they may use, and
// whether a device is there at all.
//
// A memory limit is given either in bytes or as a fraction of the device's total memory
// (TF's per_process_gpu_memory_fraction, PyTorch's set_per_process_memory_fraction); both
// may be given, and the smaller wins.
#pragma once

#include <fraglab/backends/detail/cuda_error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace fraglab {

struct device_memory_limit {
  std::size_t bytes = std::numeric_limits<std::size_t>::max();
  double fraction = 0.0;  // of the device's total memory; 0: unset

  // The limit in bytes on a device of `total` bytes.
  [[nodiscard]] std::size_t resolve(std::size_t total) const
  {
    if (!(fraction >= 0.0 && fraction <= 1.0))
      throw std::invalid_argument("device memory fraction must be in [0, 1], got " + std::to_string(fraction));
    if (fraction == 0.0) return bytes;
    auto const of_total = static_cast<std::size_t>(static_cast<long double>(total) * fraction);
    return of_total < bytes ? of_total : bytes;
  }
};

// Why no CUDA device can be used here (CUDA's own text), or nothing when one can.
inline std::optional<std::string> cuda_device_unavailable()
{
  int count = 0;
  cudaError_t const e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // do not leave the error for the next call to report
    return detail::runtime_failure("cudaGetDeviceCount", e).message();
  }
  if (count == 0) return "cudaGetDeviceCount: no CUDA device";
  return std::nullopt;
}

namespace detail {

// Makes `device` current for a scope and restores the caller's device after it, so that a
// backend serving device 1 can be called from a thread working on device 0.
class cuda_device_scope {
 public:
  explicit cuda_device_scope(int device)
  {
    check_runtime(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_runtime(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
  }
  cuda_device_scope(cuda_device_scope const&) = delete;
  cuda_device_scope& operator=(cuda_device_scope const&) = delete;
  ~cuda_device_scope() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

// Total memory of `device` in bytes.
inline std::size_t cuda_device_total_memory(int device)
{
  cuda_device_scope const on(device);
  std::size_t free = 0, total = 0;
  check_runtime(cudaMemGetInfo(&free, &total), "cudaMemGetInfo on device " + std::to_string(device));
  return total;
}

}  // namespace detail

// The limit in bytes for `device`; asks the device for its size only when a fraction is set.
inline std::size_t resolve_device_limit(device_memory_limit const& limit, int device)
{
  return limit.fraction == 0.0 ? limit.bytes : limit.resolve(detail::cuda_device_total_memory(device));
}

}  // namespace fraglab
