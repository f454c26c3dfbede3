// Host-side bookkeeping for managed memory: chunks and regions.
//
// Nothing here lives inside the managed memory. A GPU's memory cannot hold headers,
// and a simulated backend has no memory at all, so every record is a host object that
// describes an address range (the approach of TF's BFC and PyTorch's caching allocator,
// unlike dlmalloc's in-band boundary tags).
//
// A chunk carries the free index's intrusive hook (which kind depends on the index, so the
// chunk type is parameterised by the index's hook). A chunk is either in the free index or
// in the live-address map (detail/live_address_map.hpp), never both.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fraglab {

using stream_id = std::uint64_t;

template <class Chunk>
struct basic_region;

template <class IndexSpec>
struct basic_chunk {
  using region_type = basic_region<basic_chunk>;

  // First, beside address and size: an index search reads the hook and the key of every
  // node it passes, and keeping them in one cache line halves the misses of a tree walk.
  typename IndexSpec::template hook<basic_chunk> free_hook;
  std::uintptr_t address = 0;
  std::size_t size = 0;         // bytes covered, always a multiple of the engine's granule
  std::size_t requested = 0;    // bytes the caller asked for while in use; 0 while free
  basic_chunk* prev = nullptr;  // address neighbours inside the same region
  basic_chunk* next = nullptr;
  region_type* region = nullptr;
  stream_id stream = 0;
  bool in_use = false;

  [[nodiscard]] std::uintptr_t end() const noexcept { return address + size; }
};

// One backend acquisition, or several adjacent ones merged when the backend allows it.
// Chunks of a region tile it exactly, linked in address order.
template <class Chunk>
struct basic_region {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  std::uint32_t pool = 0;       // the pool (stream, size class) whose chunks live here
  std::uint64_t serial = 0;     // creation order, for deterministic dumps
  std::size_t live_chunks = 0;  // chunks in use; a region with none can be released
  std::size_t acquisitions = 1; // backend acquisitions merged into this region
  std::uint64_t free_since = 0; // the reclaim rule's clock when its last live block was freed
  Chunk* first = nullptr;
  Chunk* last = nullptr;

  [[nodiscard]] std::uintptr_t end() const noexcept { return base + size; }
  [[nodiscard]] bool contains(std::uintptr_t a) const noexcept { return a >= base && a < base + size; }
};

// A read-only description of a chunk, handed to visit_chunks() callers (memory maps,
// dumps, pictures) so that they never depend on the engine's internal types.
struct chunk_view {
  std::uintptr_t address;
  std::size_t size;
  std::size_t requested;
  bool in_use;
  stream_id stream;
  std::uint64_t region_serial;
  std::uint32_t pool;
};

}  // namespace fraglab
