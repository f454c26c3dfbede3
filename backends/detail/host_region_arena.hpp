// The host backend's memory: regions placed in the order they are acquired, inside large
// ranges of the process's address space that the arena maps itself.
//
// Why not operator new, as the host backend first did: where a region lands is part of a
// policy's decisions. First fit and next fit choose among regions by address, and the
// best-fit presets break ties by it. glibc places each region among the process's own
// allocations, the engine's records and the replay's tables included, so one binary's
// decisions moved with the heap's layout, and one build's with the next build's
// allocations: first_fit on perl inserted 1,389,585 chunks under one build and 1,389,625
// under the one before, and 20bb7bf counted 956,916,785 instructions, or 954,251,960 under
// GLIBC_TUNABLES=glibc.malloc.top_pad=16777216 (docs/performance.md, "The host backend's
// arena"). Here a region's place depends only on the sizes, alignments and
// releases the backend has seen, so the decisions, and the instructions they take, are
// the same in every build and every process: exactly so while the regions fit in the first
// range; where later ranges lie is the kernel's choice. Each range starts at a multiple of
// its size, so that an alignment leaves the same gaps wherever the kernel puts it; and the
// first range is 256 GiB, more than the largest GPU trace holds (a device of 141 GiB). With
// ranges of 16 GiB at any page, cs336-a2's snapshot under buddy, whose regions are aligned
// to their own size and take 19 GB, read 3.62, 3.66 or 3.67 index steps per op from one
// process to the next; with ranges aligned, 3.68 in every process, and 3.72 in one range.
//
// The rule: a region takes the lowest-addressed range given back that holds it aligned,
// else the space above the highest region placed so far; when a range of address space is
// full the arena maps a new one, at least as large as the last. Ranges are mapped readable
// and writable with MAP_NORESERVE, so that the kernel backs only the pages written; a
// release gives its pages back at once (MADV_DONTNEED), and they read as zeros when placed
// again. A range is `default_span` of addresses where the process can have it, halved
// down to what the region needs where it cannot (valgrind lends a process about 32 GiB;
// a kernel that commits every page, vm.overcommit_memory=2, lends less).
//
// Under AddressSanitizer the bytes after each region, to the end of its page and one page
// more, are poisoned, and so is a region given back, so that an access one byte past a
// region or into one released is reported, as it was when the regions came from operator
// new with ASan's redzones (docs/reliability.md). The pages shift the addresses but not the
// regions' order, and so no decision.
#pragma once

#include <fraglab/backends/detail/address_range_set.hpp>
#include <fraglab/backends/detail/host_address_reservations.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define FRAGLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FRAGLAB_ASAN 1
#endif
#endif
#ifdef FRAGLAB_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fraglab::detail {

class host_region_arena {
 public:
  static constexpr std::size_t default_span = std::size_t{256} << 30;
#ifdef FRAGLAB_ASAN
  static constexpr std::size_t redzone = 4096;  // the poisoned page after each region
#else
  static constexpr std::size_t redzone = 0;
#endif

  // `span_bytes`: the address space each range maps at least (a multiple of the OS page).
  explicit host_region_arena(std::size_t span_bytes = default_span) noexcept : span_bytes_(span_bytes) {}
  host_region_arena(host_region_arena&& o) noexcept
      : span_bytes_(o.span_bytes_), spans_(std::exchange(o.spans_, {})), given_back_(std::exchange(o.given_back_, {}))
  {
  }
  host_region_arena& operator=(host_region_arena&&) = delete;
  ~host_region_arena()
  {
    for (mapped_range const& s : spans_) {
      unpoison(s.base, s.poisoned_end - s.base);  // the addresses may be mapped again
      ::munmap(reinterpret_cast<void*>(s.base), s.size);
    }
  }

  // The address of `size` bytes aligned to `alignment`, a power of two at least the OS
  // page, or nullopt when the process has no address space left for them. The region
  // occupies whole pages, so that giving one back never touches another's.
  std::optional<std::uintptr_t> place(std::size_t size, std::size_t alignment)
  {
    std::optional<std::size_t> const footprint = footprint_of(size);
    if (!footprint) return std::nullopt;
    std::optional<std::uintptr_t> const at = place_footprint(*footprint, alignment);
    if (at) {
      unpoison(*at, size);
      poison(*at + size, *footprint - size);  // to the byte: ASan's shadow marks partial granules
    }
    return at;
  }

  // Gives back [base, base + size), a range place() returned; its pages return to the
  // kernel and the range may be placed again.
  void give_back(std::uintptr_t base, std::size_t size)
  {
    std::size_t const footprint = *footprint_of(size);  // place() returned it, so it has one
    ::madvise(reinterpret_cast<void*>(base), footprint, MADV_DONTNEED);
    poison(base, footprint);
    give_back_range(base, footprint);
  }

  // How many ranges of address space are mapped (for tests).
  [[nodiscard]] std::size_t spans() const noexcept { return spans_.size(); }

 private:
  struct mapped_range {
    std::uintptr_t base;
    std::size_t size;
    std::uintptr_t top;           // where the next region above the others goes
    std::uintptr_t poisoned_end;  // the end of the highest range poisoned (ASan)
  };

  // The address space a region of `size` bytes occupies: whole pages, and the red zone
  // after them. nullopt where there is none (size 0) or it passes the end of the space.
  static std::optional<std::size_t> footprint_of(std::size_t size) noexcept
  {
    auto const pages = align_up_checked(size, host_address_reservations::os_page());
    if (size == 0 || !pages || *pages > ~std::size_t{0} - redzone) return std::nullopt;
    return *pages + redzone;
  }

#ifdef FRAGLAB_ASAN
  void poison(std::uintptr_t a, std::size_t n) noexcept
  {
    ASAN_POISON_MEMORY_REGION(reinterpret_cast<void*>(a), n);
    for (mapped_range& s : spans_)
      if (a - s.base < s.size) s.poisoned_end = std::max(s.poisoned_end, a + n);
  }
  static void unpoison(std::uintptr_t a, std::size_t n) noexcept { ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(a), n); }
#else
  static void poison(std::uintptr_t, std::size_t) noexcept {}
  static void unpoison(std::uintptr_t, std::size_t) noexcept {}
#endif

  std::optional<std::uintptr_t> place_footprint(std::size_t size, std::size_t alignment)
  {
    if (auto const reused = given_back_.take_first_fit(size, alignment)) return reused;
    if (spans_.empty() || !fits_above(spans_.back(), size, alignment)) {
      if (!map_span(size, alignment)) return std::nullopt;
      if (spans_.size() > 1) {  // what the full span has left, for smaller regions
        mapped_range& full = spans_[spans_.size() - 2];
        if (full.top < full.base + full.size) give_back_range(full.top, full.base + full.size - full.top);
        full.top = full.base + full.size;
      }
    }
    mapped_range& s = spans_.back();
    std::uintptr_t const at = align_up_address(s.top, alignment);
    if (at > s.top) give_back_range(s.top, at - s.top);  // the alignment's gap, for smaller regions
    s.top = at + size;
    return at;
  }

  [[nodiscard]] static bool fits_above(mapped_range const& s, std::size_t size, std::size_t alignment) noexcept
  {
    std::uintptr_t const at = align_up_address(s.top, alignment);
    std::uintptr_t const end = s.base + s.size;
    return at >= s.top && at <= end && size <= end - at;
  }

  // A range starts at a multiple of its size (of the power of two at or below it), so that
  // the layout inside it, the gaps that aligned regions leave included, is the same wherever
  // the kernel puts it: address-space randomization moves the range, not its regions
  // relative to one another.
  bool map_span(std::size_t size, std::size_t alignment)
  {
    std::size_t want = std::max({span_bytes_, size, spans_.empty() ? 0 : spans_.back().size});
    spans_.reserve(spans_.size() + 1);  // so that a range mapped is always recorded
    for (;;) {
      std::size_t const align = std::max(alignment, std::bit_floor(want));
      if (auto const base = host_address_reservations::map_aligned(want, align, PROT_READ | PROT_WRITE)) {
        spans_.push_back({*base, want, *base, *base});
        return true;
      }
      if (want == size) return false;
      want = std::max(size, align_up(want / 2, host_address_reservations::os_page()));
    }
  }

  // Ranges of two spans never merge, even where the kernel put the spans side by side.
  void give_back_range(std::uintptr_t base, std::size_t size)
  {
    given_back_.insert(base, size, [this](std::uintptr_t a, std::uintptr_t b) { return same_span(a, b); });
  }

  [[nodiscard]] bool same_span(std::uintptr_t a, std::uintptr_t b) const noexcept
  {
    for (mapped_range const& s : spans_)
      if (a - s.base < s.size) return b - s.base < s.size;
    return false;
  }

  std::size_t span_bytes_;
  std::vector<mapped_range> spans_;
  address_range_set given_back_;
};

}  // namespace fraglab::detail
