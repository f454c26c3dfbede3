// Merging free address neighbours while keeping the free index in step: immediate
// coalescing on a free (boundary-tag coalescing, Knuth TAOCP 2.5; next neighbour first,
// then previous, as TF's BFC does) and deferred coalescing's sweep on a miss (Wilson et al.
// 1995, section 3.9). Buddy merging is engine/detail/buddy.hpp's.
//
// An index that updates in place (engine/concepts.hpp: in_place_index, keyed_in_place_index)
// is told that a record grew or moved its start instead of losing it and gaining another,
// so that most merges relink no node (docs/performance.md, "Chunk records").
#pragma once

#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/chunk_list.hpp>

#include <cstddef>

namespace fraglab::detail {

// Whether the index splits and merges in place: by address alone (in_place_index: the
// indexed record survives, and only its start or its size changes), or by a key it checks
// on each exchange (keyed_in_place_index). The engine's hand_out and the merges below are
// where the two kinds differ.
template <class Index, class Chunk>
inline constexpr bool updates_in_place = in_place_index<Index, Chunk> || keyed_in_place_index<Index, Chunk>;

// c, indexed when its size was `was`, has grown or shrunk where it is.
template <class Index, class Chunk>
inline void resized_in_index(Index& ix, Chunk& c, std::size_t was) noexcept
{
  if constexpr (in_place_index<Index, Chunk>) ix.resized(c, was);
  else ix.exchange(c, was, c);
}

// c, in the index, changes size; its address stays.
template <class Index, class Chunk>
inline void resize_in_index(Index& ix, Chunk& c, std::size_t size)
{
  if constexpr (updates_in_place<Index, Chunk>) {
    std::size_t const was = c.size;
    c.size = size;
    resized_in_index(ix, c, was);
  } else {
    ix.erase(c);
    c.size = size;
    ix.insert(c);
  }
}

// c is free and not in the index; merges it with free neighbours (next first, then
// previous) and returns the surviving chunk, still unindexed.
template <class Index, class Chunk>
inline Chunk* merge_free_neighbours(record_pool<Chunk>& records, Index& ix, Chunk* c) noexcept
{
  if (c->next != nullptr && !c->next->in_use()) {
    ix.erase(*c->next);
    absorb_next(records, c);
  }
  if (c->prev != nullptr && !c->prev->in_use()) {
    Chunk* p = c->prev;
    ix.erase(*p);
    absorb_next(records, p);
    c = p;
  }
  return c;
}

// c is free and not in the index; merges it with its free neighbours (next first, then
// previous) and leaves the surviving chunk in the index.
template <class Index, class Chunk>
inline Chunk* coalesce_into_index(record_pool<Chunk>& records, Index& ix, Chunk* c) noexcept
{
  if constexpr (updates_in_place<Index, Chunk>) {
    Chunk* const n = c->next != nullptr && !c->next->in_use() ? c->next : nullptr;
    Chunk* const p = c->prev != nullptr && !c->prev->in_use() ? c->prev : nullptr;
    if (p != nullptr) {  // the previous chunk grows where it is
      if (n != nullptr) {
        ix.erase(*n);
        absorb_next(records, c);
      }
      resize_in_index(ix, *p, p->size + c->size);
      records.destroy(unlink_next(p));
      return p;
    }
    if (n != nullptr) {
      std::size_t const was = n->size;
      if constexpr (in_place_index<Index, Chunk>) {  // the next chunk grows down where it is
        absorb_prev(records, n);
        ix.resized(*n, was);
        return n;
      } else {  // c, grown, takes its next neighbour's place
        c->size += was;
        ix.exchange(*n, was, *c);
        records.destroy(unlink_next(c));
        return c;
      }
    }
    ix.insert(*c);
    return c;
  } else {
    c = merge_free_neighbours(records, ix, c);
    ix.insert(*c);
    return c;
  }
}

// Deferred coalescing's sweep: merges every run of adjacent free chunks of `regions`, each
// region's in the index index_of(region) names. Returns the merges made.
template <class Chunk, class Regions, class IndexOf>
inline std::size_t coalesce_all_free(record_pool<Chunk>& records, Regions const& regions, IndexOf&& index_of)
{
  std::size_t merges = 0;
  for (auto* r : regions) {
    auto& ix = index_of(r);
    for (Chunk* c = r->first; c != nullptr; c = c->next) {
      if (c->in_use() || c->next == nullptr || c->next->in_use()) continue;
      ix.erase(*c);
      while (c->next != nullptr && !c->next->in_use()) {
        ix.erase(*c->next);
        absorb_next(records, c);
        ++merges;
      }
      ix.insert(*c);
    }
  }
  return merges;
}

}  // namespace fraglab::detail
