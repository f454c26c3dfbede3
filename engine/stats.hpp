// What an allocator reports about itself (allocator::stats()).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fraglab {

struct allocator_stats {
  std::size_t live_bytes = 0;       // sum of requested sizes of live blocks
  std::size_t allocated_bytes = 0;  // sum of chunk sizes handed out (rounding and unsplit tails included)
  std::size_t reserved_bytes = 0;   // bytes held from the backend (the footprint)
  std::size_t peak_live_bytes = 0;
  std::size_t peak_allocated_bytes = 0;
  std::size_t peak_reserved_bytes = 0;

  std::uint64_t allocations = 0;         // served requests (zero-byte ones excluded)
  std::uint64_t deallocations = 0;
  std::uint64_t failed_allocations = 0;  // normal failures: capacity, limit, refusal, no growth
  std::uint64_t misuses = 0;             // typed misuse errors reported
  std::uint64_t acquisitions = 0;        // successful backend acquisitions
  std::uint64_t releases = 0;            // regions given back to the backend
  std::uint64_t index_steps = 0;         // candidates the free indexes examined (deterministic cost)
  std::uint64_t release_retries = 0;     // misses that went on to release free regions and retry

  // Cumulative totals (what PyTorch reports as "allocated" and, by difference, "freed").
  std::uint64_t total_requested_bytes = 0;
  std::uint64_t total_allocated_bytes = 0;
  std::uint64_t total_acquired_bytes = 0;
  std::uint64_t total_released_bytes = 0;
  std::size_t peak_live_chunks = 0;
  std::size_t peak_regions = 0;
  std::size_t largest_chunk_allocated = 0;  // TF's largest_alloc_size

  std::size_t live_chunks = 0;  // counted as blocks come and go (counters() has it too)
  std::size_t free_chunks = 0;  // this and the rest: filled in by stats()
  std::size_t regions = 0;
  std::size_t largest_free_bytes = 0;
  // What the split and coalescing rules did: how hard they work the index and the records,
  // which the footprint does not show (a policy can reach the same footprint by cutting and
  // joining on every operation, or by reusing holes whole).
  std::uint64_t splits = 0;  // free chunks cut in two: a block, a buddy half or an alignment gap cut off
  std::uint64_t merges = 0;  // free chunks joined to a free address neighbour (immediate, deferred or buddy)

  // TF BFC's external fragmentation: (A - L) / A with A = reserved - allocated (free bytes)
  // and L = the largest free chunk; 0 when nothing is free.
  [[nodiscard]] double fragmentation() const noexcept
  {
    std::size_t const free_bytes = reserved_bytes - allocated_bytes;
    if (free_bytes == 0) return 0.0;
    return static_cast<double>(free_bytes - largest_free_bytes) / static_cast<double>(free_bytes);
  }
};

}  // namespace fraglab
