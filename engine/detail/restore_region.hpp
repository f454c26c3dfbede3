// allocator::restore_region(): a region rebuilt as a recorded state says it was (a PyTorch
// snapshot's segment and its live blocks), for replays that start where a recording started
// (docs/architecture.md, "Starting from a recorded state").
#pragma once

#include <span>
#include <stdexcept>
#include <string>

namespace fraglab {

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::restore_region(acquisition a, pool_key_type pool_key, std::span<restored_block const> live,
                                                      std::uintptr_t reservation_base)
{
  std::size_t const g = cfg_.size.granule();
  auto bad = [](std::string const& what) { throw std::invalid_argument("restore_region: " + what); };
  if (a.base % g != 0 || a.size % g != 0 || a.size == 0) bad("region not aligned to the granule");
  std::uintptr_t cursor = a.base;
  for (auto const& b : live) {
    if (b.address < cursor || b.address % g != 0 || b.size % g != 0 || b.size == 0 || b.requested == 0 ||
        b.requested > b.size || b.address + b.size > a.base + a.size)
      bad("block at " + std::to_string(b.address) + " does not fit the region's layout");
    cursor = b.address + b.size;
  }
  std::uint32_t const pool = pool_for(pool_key);
  auto& ix = pools_[pool]->index;
  bool const expandable = pools_[pool]->page != 0;
  if (pool_entry& pe = *pools_[pool]; expandable) {
    // A mapped range of an expandable pool (PyTorch's snapshot shows each as a segment). The
    // first, the lowest, starts the reservation (at reservation_base, where the snapshot shows
    // one lower) as far as the replay knows; the others, in
    // address order, lie in it apart from each other, at whole pages from its base.
    if (a.size % pe.page != 0 || a.size > pe.reservation_size)
      bad("an expandable pool's mapped range must be whole pages and within its reservation");
    if (pe.map_base == 0) {
      bool const below = reservation_base != 0 && reservation_base < a.base && (a.base - reservation_base) % pe.page == 0 &&
                         a.end() - reservation_base <= pe.reservation_size;
      pe.map_base = below ? reservation_base : a.base;
      pe.reservation_end = pe.map_base + pe.reservation_size;
    } else {
      std::uintptr_t mapped_end = pe.map_base;
      for (region const* o : regions_)
        if (o->pool == pool) mapped_end = std::max(mapped_end, o->end());
      if (a.base <= mapped_end || (a.base - pe.map_base) % pe.page != 0 || a.end() > pe.reservation_end)
        bad("an expandable pool's mapped ranges must come in address order, apart, at whole pages within its reservation");
    }
  }
  count_acquisition(a);
  region* r = new_region(a, pool);
  auto append = [&](std::uintptr_t address, std::size_t size) {
    chunk* c = make_chunk(address, size, r);
    detail::append(r, c);
    return c;
  };
  cursor = a.base;
  for (auto const& b : live) {
    if (b.address > cursor) ix.insert(*append(cursor, b.address - cursor));
    enter_live(append(b.address, b.size), b.requested, b.stream);
    stats_.live_bytes += b.requested;
    stats_.allocated_bytes += b.size;
    cursor = b.address + b.size;
  }
  if (cursor < a.end()) ix.insert(*append(cursor, a.end() - cursor));
  if (expandable) note_mapping_changed(pool);
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
}

}  // namespace fraglab
