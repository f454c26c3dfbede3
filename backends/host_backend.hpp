// Real host memory from the C++ runtime (aligned operator new), for using a policy as an
// actual allocator and for speed measurements. Each acquisition is a separate block, so
// acquisitions are never merged. Every block still held is returned at destruction.
#pragma once

#include "backends/backend_stats.hpp"
#include "engine/concepts.hpp"
#include "engine/detail/bits.hpp"

#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace fraglab {

struct host_backend_params {
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  std::size_t granularity = 4096;
};

class host_backend {
 public:
  using params = host_backend_params;

  explicit host_backend(params p = {}) : p_(p)
  {
    if (!detail::is_pow2(p_.granularity)) throw std::invalid_argument("granularity must be a power of two");
  }
  host_backend(host_backend&& o) noexcept : p_(o.p_), blocks_(std::move(o.blocks_)), stats_(o.stats_) { o.blocks_.clear(); }
  host_backend& operator=(host_backend&&) = delete;
  ~host_backend()
  {
    for (auto const& [base, b] : blocks_) ::operator delete(reinterpret_cast<void*>(base), b.alignment);
  }

  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    std::size_t const align = alignment > p_.granularity ? alignment : p_.granularity;
    auto const size = detail::align_up_checked(n, p_.granularity);
    if (n == 0 || !size || *size > p_.capacity - stats_.acquired_bytes) {
      ++stats_.refusals;
      return {};
    }
    void* p = ::operator new(*size, std::align_val_t{align}, std::nothrow);
    if (p == nullptr) {
      ++stats_.refusals;
      return {};
    }
    auto const base = reinterpret_cast<std::uintptr_t>(p);
    blocks_.emplace(base, block{*size, std::align_val_t{align}});
    stats_.on_acquire(*size);
    return {base, *size};
  }

  bool release(std::uintptr_t base, std::size_t n)
  {
    auto it = blocks_.find(base);
    if (it == blocks_.end() || it->second.size != n) return false;
    ::operator delete(reinterpret_cast<void*>(base), it->second.alignment);
    blocks_.erase(it);
    stats_.on_release(n);
    return true;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return p_.capacity; }
  [[nodiscard]] std::size_t granularity() const noexcept { return p_.granularity; }
  [[nodiscard]] std::size_t acquired_bytes() const noexcept { return stats_.acquired_bytes; }
  [[nodiscard]] bool supports_merging() const noexcept { return false; }
  [[nodiscard]] std::string_view name() const noexcept { return "host"; }
  [[nodiscard]] backend_stats const& stats() const noexcept { return stats_; }

 private:
  struct block {
    std::size_t size;
    std::align_val_t alignment;
  };
  params p_;
  std::unordered_map<std::uintptr_t, block> blocks_;
  backend_stats stats_;
};

static_assert(backend<host_backend>);

}  // namespace fraglab
