// Addresses dictated by a recording: a replay that must reproduce a real allocator's
// decisions announces each segment the real allocator obtained (expect()), and the next
// acquisition returns exactly that address. Acquisitions the recording did not announce,
// or whose size differs, still succeed (at a synthetic address far from any recorded one,
// or at the recorded address with the engine's size) but are counted as mismatches, so a
// verifying replay can report them instead of stopping.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string_view>
#include <utility>

namespace fraglab {

class recorded_backend {
 public:
  // Its optional members (engine/backend_traits.hpp).
  static constexpr backend_hook hooks = backend_hook::reserve | backend_hook::acquire_at;

  struct expected_segment {
    std::uintptr_t address;
    std::size_t size;
  };

  explicit recorded_backend(std::size_t granularity = 512) : granularity_(granularity) {}

  // The next acquisition should be this segment.
  void expect(std::uintptr_t address, std::size_t size) { pending_.push_back({address, size}); }

  // A segment that exists before the replay starts (a snapshot's initial state).
  void adopt(std::size_t size) { stats_.on_acquire(size); }

  // The device's memory for a while (a recorded out-of-memory: what it had free then); an
  // acquisition beyond it is refused, and is no mismatch.
  void set_capacity(std::size_t bytes) noexcept { capacity_ = bytes; }

  acquisition acquire(std::size_t n, std::size_t /*alignment*/)
  {
    if (refused(n)) return {};
    stats_.on_acquire(n);
    if (pending_.empty()) {
      ++unexpected_;
      std::uintptr_t const a = synthetic_;
      synthetic_ += detail::align_up(n, std::size_t{2} << 20);
      return {a, n};
    }
    expected_segment const e = pending_.front();
    pending_.pop_front();
    if (e.size == n) ++matched_;
    else ++mismatched_size_;
    return {e.address, n};
  }

  // Expandable segments (PyTorch's expandable_segments:True): a reservation starts where the
  // next announced mapping (expect_map) does, as PyTorch maps a new segment from its start;
  // each mapping is compared with the next one announced.
  void expect_map(std::uintptr_t address, std::size_t size) { pending_maps_.push_back({address, size}); }

  acquisition reserve(std::size_t n, std::size_t /*alignment*/)
  {
    if (!pending_maps_.empty()) return {pending_maps_.front().address, n};
    std::uintptr_t const a = synthetic_;
    synthetic_ += detail::align_up(n, std::size_t{2} << 20);
    return {a, n};
  }

  acquisition acquire_at(std::uintptr_t address, std::size_t n)
  {
    if (refused(n)) return {};
    stats_.on_acquire(n);
    if (!pending_maps_.empty() && pending_maps_.front().address == address) {
      if (pending_maps_.front().size == n) ++matched_maps_;
      else ++mismatched_maps_;
      pending_maps_.pop_front();
    } else {
      ++mismatched_maps_;
    }
    return {address, n};
  }

  bool release(std::uintptr_t base, std::size_t n)
  {
    stats_.on_release(n);
    released_.push_back({base, n});
    return true;
  }

  // What the allocator gave back since the last call, in order (segments freed, pages
  // unmapped), for comparison with what the recording gave back.
  [[nodiscard]] std::deque<expected_segment> take_released() { return std::exchange(released_, {}); }

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t granularity() const noexcept { return granularity_; }
  [[nodiscard]] std::size_t acquired_bytes() const noexcept { return stats_.acquired_bytes; }
  [[nodiscard]] bool supports_merging() const noexcept { return false; }
  [[nodiscard]] std::string_view name() const noexcept { return "recorded"; }
  [[nodiscard]] backend_stats const& stats() const noexcept { return stats_; }

  [[nodiscard]] std::uint64_t matched() const noexcept { return matched_; }            // recorded address and size
  [[nodiscard]] std::uint64_t mismatched_size() const noexcept { return mismatched_size_; }
  [[nodiscard]] std::uint64_t unexpected() const noexcept { return unexpected_; }      // acquisitions never announced
  [[nodiscard]] std::size_t pending() const noexcept { return pending_.size(); }      // announced, never acquired
  // Drops announcements the allocator did not act on (the caller reports them).
  void discard_pending() noexcept { pending_.clear(); }
  [[nodiscard]] std::uint64_t matched_maps() const noexcept { return matched_maps_; }
  [[nodiscard]] std::uint64_t mismatched_maps() const noexcept { return mismatched_maps_; }
  [[nodiscard]] std::size_t pending_maps() const noexcept { return pending_maps_.size(); }
  void discard_pending_maps() noexcept { pending_maps_.clear(); }

 private:
  bool refused(std::size_t n) noexcept
  {
    if (n <= capacity_ - std::min(capacity_, stats_.acquired_bytes)) return false;
    ++stats_.refusals;
    return true;
  }

  std::size_t granularity_;
  std::size_t capacity_ = std::numeric_limits<std::size_t>::max();
  std::deque<expected_segment> pending_, pending_maps_, released_;
  std::uintptr_t synthetic_ = std::uintptr_t{1} << 56;
  std::uint64_t matched_ = 0, mismatched_size_ = 0, unexpected_ = 0, matched_maps_ = 0, mismatched_maps_ = 0;
  backend_stats stats_;
};

static_assert(backend<recorded_backend>);

}  // namespace fraglab
