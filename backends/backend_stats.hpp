// Counters every backend keeps, so that replays can report backend calls.
#pragma once

#include <fraglab/engine/detail/bits.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace fraglab {

struct backend_stats {
  std::uint64_t acquisitions = 0;
  std::uint64_t refusals = 0;
  std::uint64_t releases = 0;
  std::size_t acquired_bytes = 0;
  std::size_t peak_acquired_bytes = 0;

  void on_acquire(std::size_t n) noexcept
  {
    ++acquisitions;
    acquired_bytes += n;
    if (acquired_bytes > peak_acquired_bytes) peak_acquired_bytes = acquired_bytes;
  }
  // n rounded up to `unit`, or nothing, counted as a refusal, where n is 0, the rounding
  // overflows, or the acquisition would take the acquired bytes past `capacity`.
  [[nodiscard]] std::optional<std::size_t> admit(std::size_t n, std::size_t unit, std::size_t capacity) noexcept
  {
    auto const size = detail::align_up_checked(n, unit);
    if (n == 0 || !size || *size > capacity - acquired_bytes) {
      ++refusals;
      return std::nullopt;
    }
    return size;
  }
  void on_release(std::size_t n) noexcept
  {
    ++releases;
    acquired_bytes -= n;
  }
};

}  // namespace fraglab
