// The binary buddy system's machinery (Knowlton 1965; Knuth TAOCP 2.5), used by the engine
// where the coalescing rule's mode is buddy (policies/coalesce_rules.hpp states the rules):
// every chunk is a power of two at an offset from its region's base that is a multiple of
// its size, so a chunk's buddy is found from its address alone.
//
// The engine asks this header four things: how large a request's chunk is, how to align a
// new region, how to tile it, and, on a hit and on a free, how to halve and to merge. Regions
// are never merged with each other, so offsets keep their meaning.
#pragma once

#include <fraglab/engine/detail/chunk_list.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>

namespace fraglab::detail::buddy {

// Whether a request of `need` bytes has a chunk: the next power of two must fit in a
// size_t.
inline bool fits_chunk(std::size_t need) noexcept { return need <= (std::size_t{1} << 63); }

// The alignment to ask of the backend for a region of `bytes`: buddy offsets are relative
// to the region's base, and aligning the base to the region's largest power of two makes
// every chunk aligned to its own size in absolute terms.
inline std::size_t region_alignment(std::size_t bytes, std::size_t granule) noexcept
{
  return std::max(granule, std::bit_floor(bytes));
}

// Tiles region r, empty, by the largest powers of two from its base, each then at an offset
// that is a multiple of its size; make_chunk(address, size, r) makes each record. The chunks
// go into the index free.
template <class Region, class Index, class MakeChunk>
inline void tile(Region* r, Index& ix, std::size_t granule, MakeChunk&& make_chunk)
{
  std::size_t offset = 0;
  while (r->size - offset >= granule) {
    std::size_t const size = std::bit_floor(r->size - offset);
    auto* c = make_chunk(r->base + offset, size, r);
    append(r, c);
    ix.insert(*c);
    offset += size;
  }
}

// c, out of the index, is halved until it is `size` bytes; the upper halves go into the
// index free.
template <class Chunk, class Index>
inline void halve_to(record_pool<Chunk>& records, Index& ix, Chunk* c, std::size_t size)
{
  while (c->size > size) ix.insert(*split_at(records, c, c->size / 2));
}

// c is free and not in the index; merges it with its buddy while the buddy is free and of
// the same size (it is then c's address neighbour), and returns the survivor, unindexed.
template <class Chunk, class Index>
inline Chunk* merge(record_pool<Chunk>& records, Index& ix, Chunk* c) noexcept
{
  for (;;) {
    bool const lower_half = ((c->address - c->region()->base) / c->size) % 2 == 0;
    Chunk* b = lower_half ? c->next : c->prev;
    if (b == nullptr || b->in_use() || b->size != c->size) return c;
    ix.erase(*b);
    if (!lower_half) c = b;
    absorb_next(records, c);
  }
}

}  // namespace fraglab::detail::buddy
