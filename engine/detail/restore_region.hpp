// allocator::restore_region(): a region rebuilt as a recorded state says it was (a PyTorch
// snapshot's segment and its live blocks), for replays that start where a recording started
// (docs/architecture.md, "Starting from a recorded state").
#pragma once

#include <span>
#include <stdexcept>
#include <string>

namespace fraglab {

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::restore_region(acquisition a, pool_key_type pool_key, std::span<restored_block const> live)
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
  if (pool_entry& pe = *pools_[pool]; pe.page != 0) {
    // An expandable pool's mapped part: its reservation starts here, and further pages
    // map after it.
    // Pages count from the reservation's base, which need not be page-aligned itself.
    if (pe.map_base != 0 || a.size % pe.page != 0 || a.size > pe.reservation_size)
      bad("an expandable pool's mapped range must be the only one, whole pages and within its reservation");
    pe.map_base = a.base;
    pe.map_end = a.end();
    pe.reservation_end = a.base + pe.reservation_size;
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
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
}

}  // namespace fraglab
