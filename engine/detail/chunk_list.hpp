// A region's chunks as a doubly linked list in address order: cutting a chunk in two and
// joining neighbours, with the records taken from and given back to the record pool.
//
// These operations know nothing of the free index or the statistics: the caller takes a
// chunk out of its index before changing its extent and puts the result back
// (engine/detail/coalescing.hpp does both for merges). Each keeps the list's invariants:
// neighbours tile the region without gaps, and the region's first and last links are its
// ends.
#pragma once

#include <fraglab/engine/detail/chunk_pool.hpp>

#include <cstddef>
#include <cstdint>

namespace fraglab::detail {

// Cuts c at `offset`; c keeps the low part, the returned chunk (free, unindexed) the rest.
template <class Chunk>
inline Chunk* split_at(record_pool<Chunk>& records, Chunk* c, std::size_t offset)
{
  Chunk* n = records.create(c->address + offset, c->size - offset, c->region(), c, c->next);
  if (c->next != nullptr) c->next->prev = n;
  else c->region()->last = n;
  c->next = n;
  c->size = offset;
  return n;
}

// Cuts c at `offset` the other way round: the returned chunk (new, unindexed) takes the
// low part, c keeps the rest and its record.
template <class Chunk>
inline Chunk* split_head(record_pool<Chunk>& records, Chunk* c, std::size_t offset)
{
  Chunk* h = records.create(c->address, offset, c->region(), c->prev, c);
  if (c->prev != nullptr) c->prev->next = h;
  else c->region()->first = h;
  c->prev = h;
  c->address += offset;
  c->size -= offset;
  return h;
}

// Takes c's next neighbour out of the region's address list (c's size is the caller's).
template <class Chunk>
inline Chunk* unlink_next(Chunk* c) noexcept
{
  Chunk* n = c->next;
  c->next = n->next;
  if (n->next != nullptr) n->next->prev = c;
  else c->region()->last = c;
  return n;
}

// c absorbs its next neighbour, whose record is recycled.
template <class Chunk>
inline void absorb_next(record_pool<Chunk>& records, Chunk* c) noexcept
{
  c->size += c->next->size;
  records.destroy(unlink_next(c));
}

// c absorbs its previous neighbour, whose record is recycled: c's start moves down to it.
template <class Chunk>
inline void absorb_prev(record_pool<Chunk>& records, Chunk* c) noexcept
{
  Chunk* const p = c->prev;
  c->address = p->address;
  c->size += p->size;
  c->prev = p->prev;
  if (p->prev != nullptr) p->prev->next = c;
  else c->region()->first = c;
  records.destroy(p);
}

// Links c, which starts where the region's chunks end, at the end of region r's list.
template <class Chunk, class Region>
inline void append(Region* r, Chunk* c) noexcept
{
  c->prev = r->last;
  if (r->last != nullptr) r->last->next = c;
  else r->first = c;
  r->last = c;
}

// The chunk of `regions` whose range holds `address`, or null: a scan, for the cold paths
// (misuse diagnosis, a layer's claim).
template <class Regions>
inline auto find_chunk(Regions const& regions, std::uintptr_t address) noexcept -> decltype(regions.front()->first)
{
  for (auto const* r : regions) {
    if (!r->contains(address)) continue;
    for (auto* c = r->first; c != nullptr; c = c->next)
      if (address >= c->address && address < c->end()) return c;
  }
  return nullptr;
}

}  // namespace fraglab::detail
