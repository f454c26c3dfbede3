// Real host memory, for using a policy as an actual allocator and for speed measurements.
// Each acquisition is a separate region, so acquisitions are never merged. Regions are
// placed by detail::host_region_arena, in the order they are acquired inside ranges of
// address space the backend maps itself, not by the C++ runtime's allocator: a policy that
// chooses among regions by address then makes the same decisions in every build and every
// process (the arena's header says why). Every region still held is returned at destruction.
//
// Address reservations, for expandable pools (pytorch_expandable), come from the process's
// own virtual memory instead (detail::host_address_reservations): reserve() takes a range
// of addresses with no memory behind it, acquire_at() makes pages inside it readable and
// writable, counted against the capacity, and release() of such pages gives them back and
// makes them inaccessible again, as cuda_vmm does on the device. Reservations are kept
// until destruction. The pages are mapped in units of the granularity or the OS page,
// whichever is larger.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/backends/detail/host_address_reservations.hpp>
#include <fraglab/backends/detail/host_region_arena.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
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
  // Its optional members (engine/backend_traits.hpp).
  static constexpr backend_hook hooks = backend_hook::reserve | backend_hook::acquire_at;

  using params = host_backend_params;

  explicit host_backend(params p = {}) : p_(p)
  {
    if (!detail::is_pow2(p_.granularity)) throw std::invalid_argument("granularity must be a power of two");
  }
  // The arena and the reservations hand their mappings over, so the moved-from backend
  // unmaps nothing.
  host_backend(host_backend&&) noexcept = default;
  host_backend& operator=(host_backend&&) = delete;

  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    std::size_t const align = alignment > mapping_unit() ? alignment : mapping_unit();
    if (!detail::is_pow2(align)) {
      ++stats_.refusals;
      return {};
    }
    auto const size = stats_.admit(n, p_.granularity, p_.capacity);
    if (!size) return {};
    auto const base = regions_.place(*size, align);
    if (!base) {
      ++stats_.refusals;
      return {};
    }
    blocks_.emplace(*base, *size);
    stats_.on_acquire(*size);
    return {*base, *size};
  }

  // A range of `n` bytes (rounded to the mapping unit) aligned to `alignment` where that is
  // a power of two larger than the unit, else to the unit; no memory, never counted.
  acquisition reserve(std::size_t n, std::size_t alignment)
  {
    std::size_t const unit = mapping_unit();
    auto const size = detail::align_up_checked(n, unit);
    if (n == 0 || !size) return {};
    std::size_t const align = detail::is_pow2(alignment) && alignment > unit ? alignment : unit;
    auto const r = reservations_.reserve(*size, align);
    return r ? acquisition{r->base, r->size} : acquisition{};
  }

  // Maps `n` bytes (rounded to the mapping unit) at `address`, inside a reservation and not
  // mapped yet.
  acquisition acquire_at(std::uintptr_t address, std::size_t n)
  {
    auto const size = detail::align_up_checked(n, mapping_unit());
    if (n == 0 || !size || address % mapping_unit() != 0 || !reservations_.can_map(address, *size) ||
        *size > p_.capacity - stats_.acquired_bytes || !reservations_.map(address, *size)) {
      ++stats_.refusals;
      return {};
    }
    stats_.on_acquire(*size);
    return {address, *size};
  }

  bool release(std::uintptr_t base, std::size_t n)
  {
    if (reservations_.reserved(base)) {
      if (base % mapping_unit() != 0 || n % mapping_unit() != 0 || !reservations_.unmap(base, n)) return false;
      stats_.on_release(n);
      return true;
    }
    auto it = blocks_.find(base);
    if (it == blocks_.end() || it->second != n) return false;
    regions_.give_back(base, n);
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
  [[nodiscard]] std::size_t mapping_unit() const noexcept
  {
    return std::max(p_.granularity, detail::host_address_reservations::os_page());
  }

  params p_;
  detail::host_region_arena regions_;
  std::unordered_map<std::uintptr_t, std::size_t> blocks_;  // base -> size of each region held
  detail::host_address_reservations reservations_;
  backend_stats stats_;
};

static_assert(backend<host_backend>);

}  // namespace fraglab
