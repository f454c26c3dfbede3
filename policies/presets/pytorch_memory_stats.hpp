// PyTorch's torch.cuda.memory_stats() keys, computed from a fraglab allocator running the
// pytorch_caching preset (names and meanings from c10/cuda/CUDACachingAllocator.{h,cpp},
// PyTorch 2.5-2.9; aggregate over pools, as the "all" entries).
//
// Each stat has current / peak / allocated / freed (allocated and freed: cumulative increases
// and decreases). Counters the engine keeps cheaply on every operation give all four; the
// inactive_split and oversize stats are computed from the chunk layout when asked, so they
// have a current value only (tracking their peaks would cost every policy's hot path).
// "active" equals "allocation" here: a free takes effect at free_completed, so no block is
// freed-but-awaiting-its-stream-events.
#pragma once

#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/stats.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fraglab::presets::pytorch {

struct memory_stat {
  std::string_view name;
  std::uint64_t current = 0;
  std::optional<std::uint64_t> peak, allocated, freed;
};

// `alloc` is anything with stats() and visit_chunks(f) (an engine allocator or any_allocator);
// `max_split_size` is the preset's setting (oversize means at least that large).
template <class Alloc>
std::vector<memory_stat> memory_stats(Alloc const& alloc, std::size_t max_split_size)
{
  allocator_stats const s = alloc.stats();
  // One pass: visit_chunks goes region by region, so a region's totals are complete when the
  // next region starts (a free chunk is an inactive split unless it is its region's only chunk).
  std::uint64_t inactive_split = 0, inactive_split_bytes = 0, oversize_allocations = 0, oversize_segments = 0;
  struct region_totals {
    std::uint64_t serial = 0;
    std::size_t chunks = 0, bytes = 0, free_chunks = 0, free_bytes = 0;
  } r;
  auto close_region = [&] {
    if (r.chunks == 0) return;
    if (r.chunks > 1) {
      inactive_split += r.free_chunks;
      inactive_split_bytes += r.free_bytes;
    }
    oversize_segments += r.bytes >= max_split_size ? 1 : 0;
  };
  alloc.visit_chunks([&](chunk_view const& c) {
    if (r.chunks != 0 && c.region_serial != r.serial) {
      close_region();
      r = {};
    }
    r.serial = c.region_serial;
    ++r.chunks;
    r.bytes += c.size;
    if (!c.in_use) {
      ++r.free_chunks;
      r.free_bytes += c.size;
    } else if (c.size >= max_split_size) {
      ++oversize_allocations;
    }
  });
  close_region();

  auto full = [](std::string_view name, std::uint64_t current, std::uint64_t peak, std::uint64_t allocated) {
    // Blocks a snapshot replay restored were never counted as allocated: clamp.
    return memory_stat{name, current, peak, allocated, allocated > current ? allocated - current : 0};
  };
  return {
      full("allocation", s.live_chunks, s.peak_live_chunks, s.allocations),
      full("active", s.live_chunks, s.peak_live_chunks, s.allocations),
      full("allocated_bytes", s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes),
      full("active_bytes", s.allocated_bytes, s.peak_allocated_bytes, s.total_allocated_bytes),
      full("requested_bytes", s.live_bytes, s.peak_live_bytes, s.total_requested_bytes),
      full("segment", s.regions, s.peak_regions, s.acquisitions),
      full("reserved_bytes", s.reserved_bytes, s.peak_reserved_bytes, s.total_acquired_bytes),
      {"inactive_split", inactive_split, {}, {}, {}},
      {"inactive_split_bytes", inactive_split_bytes, {}, {}, {}},
      {"oversize_allocations", oversize_allocations, {}, {}, {}},
      {"oversize_segments", oversize_segments, {}, {}, {}},
      {"num_alloc_retries", s.release_retries, {}, {}, {}},
      {"num_ooms", s.failed_allocations, {}, {}, {}},
      {"num_device_alloc", s.acquisitions, {}, {}, {}},
      {"num_device_free", s.releases, {}, {}, {}},
  };
}

}  // namespace fraglab::presets::pytorch
