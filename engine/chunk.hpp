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
#include <new>

namespace fraglab {

using stream_id = std::uint64_t;

template <class Chunk>
struct basic_region;

// What only a live block has. A live chunk is in no index, so these share the storage of
// the free index's hook, as dlmalloc keeps a free chunk's links in its unused payload.
struct live_fields {
  std::size_t requested;  // bytes the caller asked for
  stream_id stream;       // the stream it was allocated on
  // The allocator that handed it out: a block reference given to another allocator is
  // refused by comparing this word, which lies in the line the free reads anyway, rather
  // than by reading the region's record. The fields fit in 24 bytes, within every index's
  // hook (24 to 40 bytes) but the plain list's (16), whose record grows from 56 bytes to 64.
  void const* owner;
};

template <class IndexSpec>
struct basic_chunk {
  using region_type = basic_region<basic_chunk>;
  using hook_type = typename IndexSpec::template hook<basic_chunk>;

  basic_chunk() : free_hook() {}
  // A free chunk with every field given at once: a split's new record is written once, not
  // zeroed first and then overwritten field by field (docs/performance.md, "Hot and cold paths").
  basic_chunk(std::uintptr_t at, std::size_t bytes, region_type* r, basic_chunk* before, basic_chunk* after) noexcept
      : free_hook(), address(at), size(bytes), prev(before), next(after), region_and_in_use_(reinterpret_cast<std::uintptr_t>(r))
  {
  }
  ~basic_chunk() {}  // the hook (Boost's normal_link or fraglab's) has nothing to undo
  basic_chunk(basic_chunk const&) = delete;
  basic_chunk& operator=(basic_chunk const&) = delete;

  // First, beside address and size: an index search reads the hook and the key of every
  // node it passes, and keeping them in one cache line halves the misses of a tree walk.
  union {
    hook_type free_hook;  // while free: the index's links
    live_fields live;     // while in use
  };
  std::uintptr_t address = 0;
  std::size_t size = 0;         // bytes covered, always a multiple of the engine's granule
  basic_chunk* prev = nullptr;  // address neighbours inside the same region
  basic_chunk* next = nullptr;

  [[nodiscard]] std::uintptr_t end() const noexcept { return address + size; }

  [[nodiscard]] region_type* region() const noexcept { return reinterpret_cast<region_type*>(region_and_in_use_ & ~in_use_bit); }
  [[nodiscard]] bool in_use() const noexcept { return (region_and_in_use_ & in_use_bit) != 0; }
  void set_region(region_type* r) noexcept { region_and_in_use_ = reinterpret_cast<std::uintptr_t>(r) | (region_and_in_use_ & in_use_bit); }

  // The chunk is handed out: `live` replaces the hook (assigning a member of trivial type
  // begins its lifetime).
  void make_live(std::size_t requested, stream_id stream, void const* owner) noexcept
  {
    live = live_fields{requested, stream, owner};
    region_and_in_use_ |= in_use_bit;
  }

  // The chunk is freed, before any index sees it: the hook is constructed again in the
  // storage `live` used (for Boost's normal_link hooks the constructor stores nothing).
  void make_free() noexcept
  {
    ::new (static_cast<void*>(&free_hook)) hook_type();
    region_and_in_use_ &= ~in_use_bit;
  }

 private:
  // The in-use flag rides in the region pointer's low bit (region records hold 64-bit
  // fields, so they are aligned to 8): with the neighbours, the key and a 24-byte hook, a
  // chunk then fills one 64-byte cache line, where a separate flag would spill it into a
  // second.
  static constexpr std::uintptr_t in_use_bit = 1;
  std::uintptr_t region_and_in_use_ = 0;
};

// One backend acquisition, or several adjacent ones merged when the backend allows it.
// Chunks of a region tile it exactly, linked in address order.
template <class Chunk>
struct basic_region {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  std::uint32_t pool = 0;       // the pool (stream, size class) whose chunks live here
  std::uint64_t serial = 0;     // creation order, for deterministic dumps
  std::size_t live_chunks = 0;  // chunks in use, counted only without immediate coalescing (allocator::region_is_idle)
  std::size_t acquisitions = 1; // backend acquisitions merged into this region
  std::uint64_t free_since = 0; // the reclaim rule's clock when its last live block was freed
  std::size_t unmapped_after = 0; // expandable pools: the unmapped bytes of the reservation from end() on
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
