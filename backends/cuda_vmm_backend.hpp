// Device memory through CUDA's virtual memory management (the driver's cuMem* calls): a
// range of addresses is reserved once (cuMemAddressReserve) and physical pages of the
// granularity the device reports are created and mapped into it as the pool grows
// (cuMemCreate + cuMemMap + cuMemSetAccess), so the pool grows in place: consecutive
// acquisitions are adjacent and the engine merges them into one region. This is the
// mechanism of PyTorch's expandable segments (c10/cuda/CUDACachingAllocator.cpp,
// ExpandableSegment, PyTorch 2.1+).
//
// Every page is its own physical allocation, as in PyTorch's expandable segments, so any
// page-aligned range can be unmapped and given back (release()), the pool's free tail
// included. Unmapping synchronizes the device first: kernels still running may use the
// pages.
//
// Besides acquire(), the backend offers the address reservations the engine's expandable
// pools use (reserve(), then acquire_at() inside a reservation), as the simulated backend
// does for replays, and maps pages it holds a second time inside a reservation
// (map_alias(): cuMemMap of each page's own handle again), as GMLake stitches blocks. The
// driver keeps a page's memory while any mapping of it remains, so a page given back while
// an alias still maps it lives on until the alias goes.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/backends/cuda_device.hpp>
#include <fraglab/backends/detail/cuda_driver_api.hpp>
#include <fraglab/backends/detail/cuda_error.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <cuda.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

struct cuda_vmm_backend_params {
  int device = 0;
  device_memory_limit limit;
  // Addresses reserved for acquire(): 0 reserves as much as the device has memory, which
  // a pool growing in place can never outgrow.
  std::size_t reservation = 0;
};

class cuda_vmm_backend {
 public:
  // Its optional members (engine/backend_traits.hpp).
  static constexpr backend_hook hooks = backend_hook::next_address | backend_hook::reserve | backend_hook::acquire_at |
                                        backend_hook::map_alias | backend_hook::unmap_alias;

  using params = cuda_vmm_backend_params;

  explicit cuda_vmm_backend(params p = {}) : s_(std::make_unique<state>())
  {
    s_->device = p.device;
    s_->api = &detail::cuda_driver_api::get();
    detail::cuda_device_scope const on(p.device);  // creates the primary context the cuMem calls use
    std::size_t const total = detail::cuda_device_total_memory(p.device);
    s_->capacity = p.limit.resolve(total);
    s_->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    s_->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    s_->prop.location.id = p.device;
    s_->api->check(s_->api->mem_get_allocation_granularity(&s_->page, &s_->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                   "cuMemGetAllocationGranularity on device " + std::to_string(p.device));
    if (!detail::is_pow2(s_->page))  // every device so far reports 2 MiB
      throw std::runtime_error("cuda_vmm: the device's granularity " + std::to_string(s_->page) + " is not a power of two");
    s_->reservation_size = detail::round_up_to_multiple(p.reservation != 0 ? p.reservation : total, s_->page);
  }
  cuda_vmm_backend(cuda_vmm_backend&&) noexcept = default;
  cuda_vmm_backend& operator=(cuda_vmm_backend&&) = delete;
  ~cuda_vmm_backend()
  {
    if (!s_) return;
    try {
      detail::cuda_device_scope const on(s_->device);
      (void)cudaDeviceSynchronize();
      for (auto const& [address, handle] : s_->aliases) (void)s_->api->mem_unmap(address, s_->page);
      for (auto const& [address, handle] : s_->pages) {
        (void)s_->api->mem_unmap(address, s_->page);
        (void)s_->api->mem_release(handle);
      }
      for (auto const& r : s_->reservations) (void)s_->api->mem_address_free(r.base, r.size);
    } catch (cuda_error const&) {
      // At process exit the runtime may already be unloading; there is no one left to tell.
    }
  }

  // Maps `n` bytes (rounded to pages) at the top of the backend's own reservation.
  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    if (s_->top == 0) {
      acquisition const r = reserve(s_->reservation_size, s_->page);
      s_->top = r.base;
      s_->top_end = r.end();
    }
    std::uintptr_t const at = detail::align_up_address(s_->top, alignment > s_->page ? alignment : s_->page);
    auto const size = detail::align_up_checked(n, s_->page);
    if (!size || at > s_->top_end || *size > s_->top_end - at) {
      ++s_->stats.refusals;
      return {};
    }
    acquisition const a = acquire_at(at, *size);
    if (a) s_->top = a.end();
    return a;
  }

  // A range of addresses with no memory behind it, for acquire_at(); never counted.
  acquisition reserve(std::size_t n, std::size_t alignment)
  {
    auto const size = detail::align_up_checked(n, s_->page);
    if (n == 0 || !size) return {};
    CUdeviceptr base = 0;
    // The driver takes power-of-two alignments; PyTorch's 20 MiB pages count from the base,
    // which needs only the device's page.
    std::size_t const align = detail::is_pow2(alignment) && alignment > s_->page ? alignment : s_->page;
    detail::cuda_device_scope const on(s_->device);
    CUresult const r = s_->api->mem_address_reserve(&base, *size, align, 0, 0);
    if (r != CUDA_SUCCESS) {
      s_->last_error = s_->api->refusal_or_throw(r, "cuMemAddressReserve(" + std::to_string(*size) + " bytes)");
      return {};
    }
    s_->reservations.push_back({static_cast<std::uintptr_t>(base), *size});
    return {static_cast<std::uintptr_t>(base), *size};
  }

  // Maps `n` bytes of new pages at `address`, inside a reservation and not mapped yet.
  acquisition acquire_at(std::uintptr_t address, std::size_t n)
  {
    auto const size = detail::align_up_checked(n, s_->page);
    if (n == 0 || !size || address % s_->page != 0 || !reserved(address, *size) ||
        *size > s_->capacity - s_->stats.acquired_bytes) {
      ++s_->stats.refusals;
      return {};
    }
    detail::cuda_device_scope const on(s_->device);
    for (std::uintptr_t page = address; page < address + *size; page += s_->page) {
      if (map_page(page)) continue;
      unmap(address, page - address);  // a refusal leaves nothing mapped
      ++s_->stats.refusals;
      return {};
    }
    CUmemAccessDesc access{};
    access.location = s_->prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    s_->api->check(s_->api->mem_set_access(address, *size, &access, 1),
                   "cuMemSetAccess(" + std::to_string(*size) + " bytes)");
    s_->stats.on_acquire(*size);
    return {address, *size};
  }

  // Unmaps whole mapped pages and gives them back to the device.
  bool release(std::uintptr_t base, std::size_t n)
  {
    if (n == 0 || base % s_->page != 0 || n % s_->page != 0) return false;
    for (std::uintptr_t page = base; page < base + n; page += s_->page)
      if (!s_->pages.contains(page)) return false;
    detail::cuda_device_scope const on(s_->device);
    detail::check_runtime(cudaDeviceSynchronize(), "cudaDeviceSynchronize before cuMemUnmap");
    unmap(base, n);
    s_->stats.on_release(n);
    if (base + n == s_->top) s_->top = base;  // the top of the pool can be mapped again in place
    return true;
  }

  // Maps the pages at `pages` (each mapped by acquire_at) again, in order, from `at`, inside a
  // reservation and not mapped yet. False, with nothing mapped, otherwise.
  bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages)
  {
    std::size_t const n = pages.size() * s_->page;
    if (pages.empty() || at % s_->page != 0 || !reserved(at, n)) return false;
    for (std::uintptr_t p : pages)
      if (!s_->pages.contains(p)) return false;
    for (std::size_t i = 0; i < pages.size(); ++i)
      if (s_->aliases.contains(at + i * s_->page)) return false;
    auto const& api = *s_->api;
    detail::cuda_device_scope const on(s_->device);
    for (std::size_t i = 0; i < pages.size(); ++i) {
      std::uintptr_t const alias = at + i * s_->page;
      CUmemGenericAllocationHandle const handle = s_->pages.at(pages[i]);
      if (CUresult const r = api.mem_map(alias, s_->page, 0, handle, 0); r != CUDA_SUCCESS) {
        unmap_alias(at, i * s_->page);
        throw cuda_error(api.failure("cuMemMap of a page again", r));
      }
      s_->aliases.emplace(alias, handle);
    }
    CUmemAccessDesc access{};
    access.location = s_->prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    api.check(api.mem_set_access(at, n, &access, 1), "cuMemSetAccess(" + std::to_string(n) + " bytes)");
    return true;
  }

  // Takes the aliases in [at, at + n) away (the pages stay where acquire_at mapped them).
  void unmap_alias(std::uintptr_t at, std::size_t n)
  {
    auto const& api = *s_->api;
    detail::cuda_device_scope const on(s_->device);
    detail::check_runtime(cudaDeviceSynchronize(), "cudaDeviceSynchronize before cuMemUnmap");
    for (auto it = s_->aliases.lower_bound(at); it != s_->aliases.end() && it->first < at + n;) {
      api.check(api.mem_unmap(it->first, s_->page), "cuMemUnmap");
      it = s_->aliases.erase(it);
    }
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return s_->capacity; }
  [[nodiscard]] std::size_t granularity() const noexcept { return s_->page; }
  [[nodiscard]] std::size_t acquired_bytes() const noexcept { return s_->stats.acquired_bytes; }
  [[nodiscard]] bool supports_merging() const noexcept { return true; }
  [[nodiscard]] std::uintptr_t next_address() const noexcept { return s_->top; }
  [[nodiscard]] std::string_view name() const noexcept { return "cuda_vmm"; }
  [[nodiscard]] backend_stats const& stats() const noexcept { return s_->stats; }
  [[nodiscard]] std::optional<cuda_failure> const& last_error() const noexcept { return s_->last_error; }

 private:
  struct range {
    std::uintptr_t base;
    std::size_t size;
  };
  struct state {
    int device = 0;
    detail::cuda_driver_api const* api = nullptr;
    CUmemAllocationProp prop{};
    std::size_t page = 0;
    std::size_t capacity = 0;
    std::size_t reservation_size = 0;
    std::uintptr_t top = 0, top_end = 0;  // acquire()'s reservation: mapped up to top
    std::vector<range> reservations;
    std::map<std::uintptr_t, CUmemGenericAllocationHandle> pages;
    std::map<std::uintptr_t, CUmemGenericAllocationHandle> aliases;  // map_alias: address -> the page's handle
    backend_stats stats;
    std::optional<cuda_failure> last_error;
  };

  [[nodiscard]] bool reserved(std::uintptr_t address, std::size_t n) const
  {
    for (auto const& r : s_->reservations)
      if (address >= r.base && address - r.base <= r.size && n <= r.size - (address - r.base)) {
        auto const next = s_->pages.lower_bound(address);
        auto const alias = s_->aliases.lower_bound(address);
        return (next == s_->pages.end() || next->first >= address + n) &&
               (alias == s_->aliases.end() || alias->first >= address + n);
      }
    return false;
  }

  // false: the device has no memory for another page (kept in last_error()).
  bool map_page(std::uintptr_t page)
  {
    auto const& api = *s_->api;
    CUmemGenericAllocationHandle handle{};
    CUresult r = api.mem_create(&handle, s_->page, &s_->prop, 0);
    if (r != CUDA_SUCCESS) {
      s_->last_error = api.refusal_or_throw(r, "cuMemCreate(" + std::to_string(s_->page) + " bytes)");
      return false;
    }
    r = api.mem_map(page, s_->page, 0, handle, 0);
    if (r != CUDA_SUCCESS) {
      (void)api.mem_release(handle);
      throw cuda_error(api.failure("cuMemMap(" + std::to_string(s_->page) + " bytes)", r));
    }
    s_->pages.emplace(page, handle);
    return true;
  }

  void unmap(std::uintptr_t base, std::size_t n)
  {
    auto const& api = *s_->api;
    for (auto it = s_->pages.lower_bound(base); it != s_->pages.end() && it->first < base + n;) {
      api.check(api.mem_unmap(it->first, s_->page), "cuMemUnmap");
      api.check(api.mem_release(it->second), "cuMemRelease");
      it = s_->pages.erase(it);
    }
  }

  std::unique_ptr<state> s_;
};

static_assert(backend<cuda_vmm_backend>);

}  // namespace fraglab
