// The machinery shared by the CUDA backends that hand out one separate block per
// acquisition (cudaMalloc, cudaMallocFromPoolAsync, cudaHostAlloc): rounding sizes to the
// granularity, the capacity limit, alignment beyond what the CUDA call guarantees (paid for
// only when CUDA's block is not already aligned), the record of blocks for release, and the
// split between refusals and errors (detail/cuda_error.hpp). What differs is a small
// `Source` layer, in the manner of Heap Layers:
//
// | expression               | result      | meaning                                          |
// |--------------------------|-------------|--------------------------------------------------|
// | Source::name             | string_view | the backend's name                               |
// | Source::guaranteed_alignment | size_t  | the alignment every block has                    |
// | s.allocate(&p, n)        | cudaError_t | one block of n bytes                             |
// | s.deallocate(p)          | cudaError_t | gives a block back                               |
// | s.call(n)                | std::string | the allocation call as written in an error       |
// | s.device()               | int         | the device made current around every call (-1: none) |
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/backends/cuda_device.hpp>
#include <fraglab/backends/detail/cuda_error.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace fraglab::detail {

template <class Source>
class cuda_block_backend {
 public:
  // `capacity` in bytes, already resolved (cuda_device.hpp).
  cuda_block_backend(std::unique_ptr<Source> source, std::size_t capacity, std::size_t granularity)
      : source_(std::move(source)), capacity_(capacity), granularity_(granularity)
  {
    if (!is_pow2(granularity_)) throw std::invalid_argument("granularity must be a power of two");
  }
  cuda_block_backend(cuda_block_backend&&) noexcept = default;
  cuda_block_backend& operator=(cuda_block_backend&&) = delete;
  ~cuda_block_backend()
  {
    if (!source_) return;
    // At process exit the runtime may already be unloading; there is no one left to tell.
    for (auto const& [base, b] : blocks_) {
      try {
        (void)on_device([&] { return source_->deallocate(b.raw); });
      } catch (cuda_error const&) {
      }
    }
  }

  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    if (!is_pow2(alignment)) {
      ++stats_.refusals;
      return {};
    }
    auto const size = stats_.admit(n, granularity_, capacity_);
    if (!size) return {};
    void* raw = nullptr;
    if (!allocate(&raw, *size)) return {};
    if (reinterpret_cast<std::uintptr_t>(raw) % alignment != 0) {
      // Beyond what the call guarantees (CUDA aligns large blocks to 2 MiB in practice, so
      // this is rare): a larger block, aligned inside, and the original pointer is freed.
      check_runtime(on_device([&] { return source_->deallocate(raw); }), std::string(Source::name) + " release");
      std::size_t const padding = alignment - Source::guaranteed_alignment;
      if (*size > std::numeric_limits<std::size_t>::max() - padding) {
        ++stats_.refusals;
        return {};
      }
      if (!allocate(&raw, *size + padding)) return {};
    }
    std::uintptr_t const base = align_up_address(reinterpret_cast<std::uintptr_t>(raw), alignment);
    blocks_.emplace(base, block{raw, *size});
    stats_.on_acquire(*size);
    return {base, *size};
  }

  bool release(std::uintptr_t base, std::size_t n)
  {
    auto it = blocks_.find(base);
    if (it == blocks_.end() || it->second.size != n) return false;
    void* const raw = it->second.raw;
    check_runtime(on_device([&] { return source_->deallocate(raw); }), std::string(Source::name) + " release");
    blocks_.erase(it);
    stats_.on_release(n);
    return true;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  [[nodiscard]] std::size_t acquired_bytes() const noexcept { return stats_.acquired_bytes; }
  [[nodiscard]] bool supports_merging() const noexcept { return false; }
  [[nodiscard]] std::string_view name() const noexcept { return Source::name; }
  [[nodiscard]] backend_stats const& stats() const noexcept { return stats_; }
  // The CUDA failure behind the latest refusal, if a CUDA call refused.
  [[nodiscard]] std::optional<cuda_failure> const& last_error() const noexcept { return last_error_; }
  [[nodiscard]] Source& source() noexcept { return *source_; }

 private:
  struct block {
    void* raw;  // what the CUDA call returned; the acquisition may start above it
    std::size_t size;
  };

  // false: CUDA is out of memory (a refusal, kept in last_error_); other errors throw.
  bool allocate(void** raw, std::size_t bytes)
  {
    cudaError_t const e = on_device([&] { return source_->allocate(raw, bytes); });
    if (e == cudaSuccess) return true;
    last_error_ = refusal_or_throw(e, source_->call(bytes));
    ++stats_.refusals;
    return false;
  }

  template <class F>
  cudaError_t on_device(F&& f)
  {
    if (source_->device() < 0) return f();
    cuda_device_scope const on(source_->device());
    return f();
  }

  std::unique_ptr<Source> source_;
  std::size_t capacity_;
  std::size_t granularity_;
  std::unordered_map<std::uintptr_t, block> blocks_;
  backend_stats stats_;
  std::optional<cuda_failure> last_error_;
};

}  // namespace fraglab::detail
