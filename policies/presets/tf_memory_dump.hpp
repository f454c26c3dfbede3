// TensorFlow BFC's introspection (tsl/framework/bfc_allocator.cc, TF 2.12-2.17: GetStats,
// get_bin_debug_info, RenderOccupancy, DumpMemoryLog), computed from any fraglab allocator
// so that every policy can be looked at the way TF users look at BFC.
//
// - stats: TF's AllocatorStats names; bytes_in_use counts chunk sizes, not requests.
// - bins: per bin, chunks and bytes in total and in use, and requested bytes in use; every
//   chunk (free or not) counts in the bin its size maps to, as TF's debug info does.
// - occupancy: the regions, in address order and laid end to end, drawn on `resolution`
//   characters: '*' requested bytes, 'x' rounding and unsplit tails of live chunks, '_' free.
// - the memory log: bins, every chunk of every region, in-use chunks summarised by size,
//   and the stats, in TF's words.
#pragma once

#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/stats.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace fraglab::presets::tf {

inline constexpr unsigned bin_count = 21;
inline constexpr std::size_t bin_base = 256;

// TF's BinNumForSize: min(20, floor(log2(max(size, 256) / 256))).
inline unsigned bin_for_size(std::size_t size) noexcept
{
  std::size_t const scaled = std::max(size, bin_base) / bin_base;
  return std::min(bin_count - 1, static_cast<unsigned>(std::bit_width(scaled) - 1));
}

struct allocator_stats_view {
  std::uint64_t num_allocs;
  std::size_t bytes_in_use;
  std::size_t peak_bytes_in_use;
  std::size_t largest_alloc_size;
  std::size_t bytes_limit;
  std::size_t bytes_reserved;  // TF's pool_bytes
  std::size_t peak_bytes_reserved;
  std::size_t largest_free_block_bytes;
  double fragmentation;  // (free - largest free) / free
};

inline allocator_stats_view tf_stats(allocator_stats const& s, std::size_t bytes_limit)
{
  return {s.allocations,         s.allocated_bytes,     s.peak_allocated_bytes,  s.largest_chunk_allocated, bytes_limit,
          s.reserved_bytes,      s.peak_reserved_bytes, s.largest_free_bytes,    s.fragmentation()};
}

struct bin_debug_info {
  std::size_t total_bytes_in_use = 0;
  std::size_t total_bytes_in_bin = 0;
  std::size_t total_requested_bytes_in_use = 0;
  std::size_t total_chunks_in_use = 0;
  std::size_t total_chunks_in_bin = 0;
};

template <class Alloc>
std::array<bin_debug_info, bin_count> bin_info(Alloc const& alloc)
{
  std::array<bin_debug_info, bin_count> bins{};
  alloc.visit_chunks([&](chunk_view const& c) {
    bin_debug_info& b = bins[bin_for_size(c.size)];
    ++b.total_chunks_in_bin;
    b.total_bytes_in_bin += c.size;
    if (c.in_use) {
      ++b.total_chunks_in_use;
      b.total_bytes_in_use += c.size;
      b.total_requested_bytes_in_use += c.requested;
    }
  });
  return bins;
}

template <class Alloc>
std::string render_occupancy(Alloc const& alloc, std::size_t resolution = 100)
{
  struct span {
    std::size_t offset, size;
    char mark;
  };
  std::vector<span> marks;
  std::size_t total = 0;  // bytes of the regions seen so far, laid end to end
  std::uint64_t region = 0;
  std::uintptr_t region_base = 0;
  std::size_t region_offset = 0;
  bool first = true;
  alloc.visit_chunks([&](chunk_view const& c) {
    if (first || c.region_serial != region) {
      first = false;
      region = c.region_serial;
      region_base = c.address;
      region_offset = total;
    }
    total += c.size;
    std::size_t const at = region_offset + (c.address - region_base);
    if (c.in_use) {
      marks.push_back({at, c.requested, '*'});
      if (c.size > c.requested) marks.push_back({at + c.requested, c.size - c.requested, 'x'});
    }
  });
  if (total == 0) return "<allocator contains no memory>";
  std::string out(resolution, '_');
  auto const cell = [&](std::size_t byte) {
    return byte * resolution / total;  // exact while byte * resolution < 2^64 (any real address space)
  };
  // Waste first, then requested bytes, so that a cell shared by both shows the live data.
  for (char const mark : {'x', '*'})
    for (span const& s : marks)
      if (s.mark == mark && s.size > 0)
        for (std::size_t i = cell(s.offset); i <= cell(s.offset + s.size - 1); ++i) out[i] = mark;
  return out;
}

template <class Alloc>
void dump_memory_log(Alloc const& alloc, std::size_t bytes_limit, std::ostream& out)
{
  auto const bins = bin_info(alloc);
  for (unsigned b = 0; b < bin_count; ++b) {
    bin_debug_info const& i = bins[b];
    out << "Bin (" << (bin_base << b) << "): \tTotal Chunks: " << i.total_chunks_in_bin
        << ", Chunks in use: " << i.total_chunks_in_use << ". " << i.total_bytes_in_bin << "B allocated for chunks. "
        << i.total_bytes_in_use << "B in use in bin. " << i.total_requested_bytes_in_use
        << "B client-requested in use in bin.\n";
  }
  std::map<std::size_t, std::size_t> in_use_by_size;
  std::uint64_t region = 0;
  bool first = true;
  alloc.visit_chunks([&](chunk_view const& c) {
    if (first || c.region_serial != region) {
      first = false;
      region = c.region_serial;
      out << "Next region (serial " << region << ")\n";
    }
    out << (c.in_use ? "InUse" : "Free ") << " at 0x" << std::hex << c.address << std::dec << " of size " << c.size;
    if (c.in_use) out << " requested " << c.requested << " stream " << c.stream;
    out << '\n';
    if (c.in_use) ++in_use_by_size[c.size];
  });
  out << "     Summary of in-use Chunks by size: \n";
  std::size_t total = 0;
  for (auto const& [size, count] : in_use_by_size) {
    out << count << " Chunks of size " << size << " totalling " << size * count << "B\n";
    total += size * count;
  }
  out << "Sum Total of in-use chunks: " << total << "B\n";
  allocator_stats_view const s = tf_stats(alloc.stats(), bytes_limit);
  out << "Stats: \n"
      << "Limit:            " << (s.bytes_limit == std::numeric_limits<std::size_t>::max() ? std::string("unlimited") : std::to_string(s.bytes_limit)) << '\n'
      << "InUse:            " << s.bytes_in_use << '\n'
      << "MaxInUse:         " << s.peak_bytes_in_use << '\n'
      << "NumAllocs:        " << s.num_allocs << '\n'
      << "MaxAllocSize:     " << s.largest_alloc_size << '\n'
      << "Reserved:         " << s.bytes_reserved << '\n'
      << "PeakReserved:     " << s.peak_bytes_reserved << '\n'
      << "LargestFreeBlock: " << s.largest_free_block_bytes << '\n'
      << "Fragmentation:    " << s.fragmentation << '\n'
      << "Occupancy:        " << render_occupancy(alloc) << '\n';
}

}  // namespace fraglab::presets::tf
