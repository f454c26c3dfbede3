// The offline placement problem (dynamic storage allocation with every lifetime known in
// advance, Garey & Johnson's problem SR2): each buffer needs `size` contiguous bytes, aligned
// to `alignment`, over the half-open time range [lower, upper); a placement gives each an
// offset so that no two buffers live at the same time overlap in space. Its height is the
// highest end; the planner minimises it (docs/offline.md).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace fraglab::offline {

struct buffer {
  std::uint64_t lower = 0;  // first time step it is live
  std::uint64_t upper = 0;  // first time step it is no longer live
  std::uint64_t size = 0;
  std::uint64_t alignment = 1;  // a power of two; the offset is a multiple of it
};

inline constexpr std::uint64_t no_capacity = std::numeric_limits<std::uint64_t>::max();

struct problem {
  std::vector<buffer> buffers;
  std::uint64_t capacity = no_capacity;  // the height a placement must not exceed
};

// Size x lifetime, which overflows 64 bits (GCC's and Clang's 128-bit integer; __extension__
// keeps -Wpedantic quiet about it).
__extension__ using area_type = unsigned __int128;

[[nodiscard]] inline area_type area(buffer const& b) noexcept { return static_cast<area_type>(b.size) * (b.upper - b.lower); }

// A buffer with no size or no lifetime occupies nothing: it may sit anywhere (offset 0).
[[nodiscard]] inline bool occupies_space(buffer const& b) noexcept { return b.size != 0 && b.lower < b.upper; }

[[nodiscard]] inline std::uint64_t align_up(std::uint64_t offset, std::uint64_t alignment) noexcept
{
  return (offset + alignment - 1) & ~(alignment - 1);
}

}  // namespace fraglab::offline
