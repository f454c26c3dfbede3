// Reserved ranges of the process's own address space, and the read-write pages mapped inside
// them: the host's counterpart of the CUDA driver's virtual memory calls, which PyTorch's
// expandable segments are built on.
//
//   cuMemAddressReserve        reserve()  mmap(PROT_NONE, MAP_NORESERVE): addresses, no memory
//   cuMemCreate + cuMemMap     map()      mprotect(PROT_READ | PROT_WRITE)
//   cuMemUnmap + cuMemRelease  unmap()    madvise(MADV_DONTNEED), then mprotect(PROT_NONE)
//
// Why mprotect and not mmap(MAP_FIXED) over the reservation: a MAP_FIXED mapping that fails
// may already have removed the old one, leaving a hole in the reservation that any later
// mmap of the process could take; mprotect leaves the mapping in place whatever happens.
// Pages never written, and pages given back with MADV_DONTNEED, read as zeros: every map()
// hands out zeroed pages (cuMemCreate promises no contents). An access to a reservation
// outside its mapped pages faults, as it would on the device.
#pragma once

#include <fraglab/backends/detail/address_range_set.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fraglab::detail {

class host_address_reservations {
 public:
  struct range {
    std::uintptr_t base;
    std::size_t size;
  };

  host_address_reservations() = default;
  host_address_reservations(host_address_reservations&& o) noexcept
      : reservations_(std::exchange(o.reservations_, {})), mapped_(std::exchange(o.mapped_, {}))
  {
  }
  host_address_reservations& operator=(host_address_reservations&&) = delete;
  ~host_address_reservations()
  {
    for (range const& r : reservations_) ::munmap(reinterpret_cast<void*>(r.base), r.size);
  }

  // Asked of the kernel once: every acquisition of the host backend needs it.
  [[nodiscard]] static std::size_t os_page() noexcept
  {
    static std::size_t const bytes = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return bytes;
  }

  // `size` bytes of addresses starting at a multiple of `alignment` (a power of two; both
  // multiples of the OS page), with nothing behind them; nullopt when the process has no
  // such range left. Reservations last as long as this object.
  std::optional<range> reserve(std::size_t size, std::size_t alignment)
  {
    auto const base = map_aligned(size, alignment, PROT_NONE);
    if (!base) return std::nullopt;
    reservations_.push_back({*base, size});
    return range{*base, size};
  }

  // A private anonymous mapping of `size` bytes (a multiple of the OS page) with `protection`
  // and MAP_NORESERVE, starting at a multiple of `alignment` (a power of two); nullopt when
  // the process has no such range left. The caller unmaps it.
  static std::optional<std::uintptr_t> map_aligned(std::size_t size, std::size_t alignment, int protection)
  {
    std::size_t const slack = alignment > os_page() ? alignment - os_page() : 0;
    if (size == 0 || size > ~std::size_t{0} - slack) return std::nullopt;
    void* p = ::mmap(nullptr, size + slack, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return std::nullopt;
    auto const got = reinterpret_cast<std::uintptr_t>(p);
    std::uintptr_t const base = align_up_address(got, alignment);
    // The slack taken for alignment goes back on both sides.
    if (base > got) ::munmap(p, base - got);
    if (got + slack > base) ::munmap(reinterpret_cast<void*>(base + size), got + slack - base);
    return base;
  }

  // Whether `address` lies in one of the reservations.
  [[nodiscard]] bool reserved(std::uintptr_t address) const noexcept { return reservation_of(address) != nullptr; }

  // Whether [address, address + n) lies in one reservation and none of it is mapped.
  [[nodiscard]] bool can_map(std::uintptr_t address, std::size_t n) const noexcept
  {
    range const* r = reservation_of(address);
    return r != nullptr && n != 0 && n <= r->base + r->size - address && !mapped_.overlaps(address, n);
  }

  // Whether [address, address + n) is mapped throughout.
  [[nodiscard]] bool mapped(std::uintptr_t address, std::size_t n) const noexcept { return mapped_.contains(address, n); }

  // Makes [address, address + n) readable and writable; the caller checked can_map() and
  // page alignment. false: the kernel refused (its limit on mappings), and the range is still
  // unmapped here (the kernel may have opened part of it; mapping it again succeeds all the
  // same).
  bool map(std::uintptr_t address, std::size_t n)
  {
    if (::mprotect(reinterpret_cast<void*>(address), n, PROT_READ | PROT_WRITE) != 0) return false;
    mapped_.insert(address, n);
    return true;
  }

  // Gives back the pages of [address, address + n), page-aligned and mapped throughout, and
  // makes the range inaccessible again. false: not such a range, or the kernel refused; the
  // range then stays mapped here, its contents perhaps gone (the engine gives back only
  // memory that holds no live block).
  bool unmap(std::uintptr_t address, std::size_t n)
  {
    if (address % os_page() != 0 || n % os_page() != 0 || !mapped(address, n)) return false;
    void* p = reinterpret_cast<void*>(address);
    if (::madvise(p, n, MADV_DONTNEED) != 0 || ::mprotect(p, n, PROT_NONE) != 0) return false;
    mapped_.erase(address, n);
    return true;
  }

 private:
  [[nodiscard]] range const* reservation_of(std::uintptr_t address) const noexcept
  {
    for (range const& r : reservations_)
      if (address >= r.base && address - r.base < r.size) return &r;
    return nullptr;
  }

  std::vector<range> reservations_;
  address_range_set mapped_;  // the runs of mapped pages: adjacent maps merge, so an unmap may span several
};

}  // namespace fraglab::detail
