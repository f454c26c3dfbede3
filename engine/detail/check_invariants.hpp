// allocator::check_invariants(): the bookkeeping's consistency, checked from scratch.
//
// - regions tile whole acquisitions and do not overlap; chunks tile their region in
//   address order with consistent neighbour links and region pointers;
// - every size and address is a multiple of the granule;
// - a live chunk is in the live-address map and nowhere in the index; a free chunk is in
//   its pool's index; the counts of both agree with the containers;
// - byte conservation: live, allocated and reserved equal the sums over chunks and regions,
//   and reserved equals what the backend holds for us;
// - an expandable pool's regions are runs of whole pages in its reservation that never
//   touch, each with the unmapped bytes after it;
// - with immediate coalescing, no two adjacent chunks of a region are free; with buddy
//   coalescing, chunks are powers of two aligned to their size and no free chunk has a free
//   buddy of its size;
// - each index's own structure holds (ordering, bitmaps, augmentation).
#pragma once

#include <bit>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace fraglab {

template <class Policy, backend Backend>
std::string allocator<Policy, Backend>::check_invariants() const
{
  std::ostringstream err;
  std::size_t const granule = cfg_.size.granule();
  // What each index holds, gathered once, so the whole check stays O(chunks) even over
  // list indexes whose contains() is a scan.
  std::vector<std::unordered_set<chunk const*>> indexed(pools_.size());
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    pools_[i]->index.for_each([&](chunk const& c) { indexed[i].insert(&c); });
    if (indexed[i].size() != pools_[i]->index.size()) return "index of pool " + std::to_string(i) + " miscounts its chunks";
  }
  std::size_t live = 0, allocated = 0, reserved = 0, live_chunks = 0, free_chunks = 0;
  region const* previous = nullptr;
  for (region const* r : regions_by_address()) {
    if (previous != nullptr && previous->end() > r->base) {
      err << "regions at " << previous->base << " and " << r->base << " overlap";
      return err.str();
    }
    previous = r;
    reserved += r->size;
    if (pool_entry const& pe = *pools_[r->pool]; pe.page != 0) {
      // An expandable pool's regions are its mapped runs of whole pages: apart from each other,
      // inside the reservation, each knowing the unmapped bytes after it.
      std::uintptr_t next = pe.reservation_end;
      for (region const* o : regions_)
        if (o != r && o->pool == r->pool && o->base >= r->base) next = std::min(next, o->base);
      if (r->base < pe.map_base || (r->base - pe.map_base) % pe.page != 0 || r->size % pe.page != 0 || next < r->end())
        return "expandable region at " + std::to_string(r->base) + " is not whole pages inside its reservation";
      if (next == r->end() && next != pe.reservation_end)
        return "expandable regions at " + std::to_string(r->base) + " and " + std::to_string(next) + " touch";
      if (r->unmapped_after != next - r->end())
        return "expandable region at " + std::to_string(r->base) + " miscounts the unmapped bytes after it";
    }
    if (r->first == nullptr || r->first->prev != nullptr || r->first->address != r->base) {
      err << "region at " << r->base << " does not start with its first chunk";
      return err.str();
    }
    std::size_t covered = 0, region_live = 0;
    chunk const* last = nullptr;
    for (chunk const* c = r->first; c != nullptr; last = c, c = c->next) {
      if (c->region() != r) return "chunk at " + std::to_string(c->address) + " points to another region";
      if (c->size == 0 || c->size % granule != 0 || c->address % granule != 0)
        return "chunk at " + std::to_string(c->address) + " is not a positive multiple of the granule";
      if (c->address != r->base + covered) return "chunks of region " + std::to_string(r->base) + " leave a gap or overlap";
      if (c->next != nullptr && c->next->prev != c) return "neighbour links broken at " + std::to_string(c->address);
      covered += c->size;
      if (cfg_.coalesce.mode == coalesce_mode::buddy) {
        std::size_t const offset = c->address - r->base;
        if (!std::has_single_bit(c->size) || offset % c->size != 0)
          return "buddy chunk at " + std::to_string(c->address) + " is not a power of two aligned to its size";
        chunk const* buddy = (offset / c->size) % 2 == 0 ? c->next : c->prev;
        if (!c->in_use() && buddy != nullptr && !buddy->in_use() && buddy->size == c->size)
          return "free buddies at " + std::to_string(c->address) + " were not merged";
      }
      bool const in_index = indexed[r->pool].count(c) != 0;
      if (c->in_use()) {
        ++live_chunks;
        ++region_live;
        if (addresses_mapped_ && live_.find(c->address) != c) return "live chunk at " + std::to_string(c->address) + " is missing from the address map";
        live += c->live.requested;
        allocated += c->size;
        if (c->live.requested == 0 || c->live.requested > c->size)
          return "live chunk at " + std::to_string(c->address) + " records an impossible requested size";
        if (in_index) return "live chunk at " + std::to_string(c->address) + " is in the free index";
      } else {
        ++free_chunks;
        if (live_.find(c->address) != nullptr) return "free chunk at " + std::to_string(c->address) + " is in the address map";
        if (!in_index) return "free chunk at " + std::to_string(c->address) + " is missing from the free index";
        if (immediate_coalescing() && c->next != nullptr && !c->next->in_use())
          return "adjacent free chunks at " + std::to_string(c->address) + " were not coalesced";
      }
    }
    if (last != r->last) return "region at " + std::to_string(r->base) + " has a stale last chunk";
    if (covered != r->size) return "chunks do not cover region " + std::to_string(r->base);
    if (!immediate_coalescing() && region_live != r->live_chunks)
      return "region at " + std::to_string(r->base) + " miscounts live chunks";
    if (region_is_idle(r) != (region_live == 0)) return "region at " + std::to_string(r->base) + " misjudges whether it is idle";
  }
  std::size_t indexed_total = 0;
  for (auto const& p : pools_) {
    indexed_total += p->index.size();
    if (std::string e = p->index.check(); !e.empty()) return "index: " + e;
  }
  if (indexed_total != free_chunks) return "the free indexes hold " + std::to_string(indexed_total) +
                                           " chunks, regions have " + std::to_string(free_chunks) + " free";
  if (live_.size() != (addresses_mapped_ ? live_chunks : 0))
    return "the address map holds " + std::to_string(live_.size()) + " chunks, " + std::to_string(live_chunks) + " are live" +
           (addresses_mapped_ ? "" : " (and none is freed by address)");
  if (stats_.live_chunks != live_chunks) return "live chunks: counted " + std::to_string(stats_.live_chunks) + ", regions hold " + std::to_string(live_chunks);
  if (live != stats_.live_bytes) return "live bytes: counted " + std::to_string(stats_.live_bytes) + ", chunks hold " + std::to_string(live);
  if (allocated != stats_.allocated_bytes) return "allocated bytes disagree with the chunks";
  if (reserved != stats_.reserved_bytes) return "reserved bytes disagree with the regions";
  if (reserved != backend_.acquired_bytes()) return "reserved bytes disagree with the backend";
  if (chunks_.live() != live_chunks + free_chunks) return "chunk records leaked";
  return {};
}

}  // namespace fraglab
