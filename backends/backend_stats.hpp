// Counters every backend keeps, so that replays can report backend calls.
#pragma once

#include <cstddef>
#include <cstdint>

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
  void on_release(std::size_t n) noexcept
  {
    ++releases;
    acquired_bytes -= n;
  }
};

}  // namespace fraglab
