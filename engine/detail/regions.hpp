// allocator's regions: the miss path (deferred coalescing, a dedicated mapping, the reclaim
// rule's hooks, growth, release-and-retry), acquiring and extending regions (merging with an
// adjacent top region where the backend allows, mapping pages into an expandable pool's
// reservation, holes first), and giving them back (a wholly free region, the whole pages
// inside an expandable pool's free chunks, the end of a free last chunk).
//
// The growth rule decides how much to acquire (policies/growth_rules.hpp); the backend
// decides where, and whether acquisitions can merge (engine/concepts.hpp, `backend`).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace fraglab {

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::release_free_regions() -> std::size_t
{
  std::size_t released = 0;
  for (std::uint32_t pool = 0; pool < pools_.size(); ++pool)
    if (pools_[pool]->page != 0) released += unmap_free_pages(pool);
  // Highest address first, so that an sbrk-like backend can lower its top region by region.
  std::vector<region*> order(regions_);
  std::sort(order.begin(), order.end(), [](region const* a, region const* b) { return a->base > b->base; });
  for (region* r : order) {
    std::size_t const size = r->size;
    if (release(r)) released += size;
  }
  return released;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::release_region(std::uintptr_t base) -> bool
{
  for (region* r : regions_)
    if (r->base == base) return release(r);
  return false;
}

template <class Policy, backend Backend>
auto allocator<Policy, Backend>::release(region* r) -> bool
{
  if (!region_is_idle(r) || !backend_.release(r->base, r->size)) return false;
  auto& ix = pools_[r->pool]->index;
  for (chunk* c = r->first; c != nullptr;) {
    chunk* next = c->next;
    ix.erase(*c);
    chunks_.destroy(c);
    ++records_released_;
    c = next;
  }
  count_release(r->size);
  std::uint32_t const pool = r->pool;
  regions_.erase(std::find(regions_.begin(), regions_.end(), r));
  regions_pool_.destroy(r);
  if (pools_[pool]->page != 0) note_mapping_changed(pool);
  return true;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::free_region_bytes() const noexcept -> std::size_t
{
  std::size_t n = 0;
  for (region const* r : regions_)
    if (region_is_idle(r)) n += r->size;
  return n;
}

template <class Policy, backend Backend>
auto allocator<Policy, Backend>::allocate_on_miss(std::uint32_t pool, std::size_t need) -> miss_outcome
{
  auto& ix = pools_[pool]->index;
  pool_key_type const key = pools_[pool]->key;
  if (cfg_.coalesce.mode == coalesce_mode::deferred && coalesce_all_free() != 0)
    if (chunk* c = fit_type::select(ix, need)) return {c, pool, alloc_status::ok};
  if constexpr (maps_dedicated)
    if (std::size_t const bytes = cfg_.pools.mapping_size(need, pool_holds_memory(pool)); bytes != 0) {
      // As grow() refuses a findable size below the request: a pool rule whose mapping
      // cannot hold the request (its arithmetic wrapped) must not hand out a short block.
      if (bytes < need) return {nullptr, pool, alloc_status::size_overflow};
      if (chunk* c = map_dedicated(bytes)) return {c, dedicated_pool_, alloc_status::ok};
    }
  reclaim_view view{*this};
  if constexpr (reclaim_part::before_growth) cfg_.reclaim.before_growth(view, key, need);
  auto grow_and_select = [&]() -> miss_outcome {
    if (alloc_status const grown = grow(pool, need); grown != alloc_status::ok) return {nullptr, pool, grown};
    // An expandable pool serves its miss from the free chunk it has mapped pages into (or
    // found large enough), whatever the index's rules would say of that chunk: PyTorch's
    // try_allocate_expandable_block hands its candidate over without get_free_block's
    // oversize rules.
    if (pools_[pool]->page != 0) return {std::exchange(expandable_candidate_, nullptr), pool, alloc_status::ok};
    if (chunk* c = fit_type::select(ix, need)) return {c, pool, alloc_status::ok};
    return {nullptr, pool, alloc_status::no_growth};  // the growth rule's region was too small for the request
  };
  miss_outcome m = grow_and_select();
  if (m.c != nullptr) return m;
  if constexpr (reclaim_part::after_failed_growth)
    if (cfg_.reclaim.after_failed_growth(view, key, need))
      if (m = grow_and_select(); m.c != nullptr) return m;
  if (!cfg_.growth.release_free_regions) return m;
  ++stats_.release_retries;
  growth_context const ctx{need, backend_.acquired_bytes(), 0, acquisition_granularity()};
  if (cfg_.growth.release_would_help(ctx, free_region_bytes()) && release_free_regions() != 0)
    m = grow_and_select();
  return m;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::pool_holds_memory(std::uint32_t pool) const noexcept -> bool
{
  return std::any_of(regions_.begin(), regions_.end(), [&](region const* r) { return r->pool == pool; });
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::map_dedicated(std::size_t bytes) -> chunk*
{
  acquisition a;
  if constexpr (backend_traits<Backend>::acquire_mapping) a = backend_.acquire_mapping(bytes);
  else a = backend_.acquire(bytes, cfg_.size.granule());
  if (!a) return nullptr;
  if (dedicated_pool_ == no_pool) {
    // The pool has no key of its own: it carries the first pool's, so a lookup by key,
    // which returns the first pool that matches, never reaches it, whatever keys the pool
    // rule makes (a reserved key value would alias one of them).
    pools_.push_back(std::make_unique<pool_entry>(pool_entry{pools_.front()->key, index_type(cfg_.index)}));
    dedicated_pool_ = static_cast<std::uint32_t>(pools_.size() - 1);
    pools_.back()->dedicated = true;
  }
  std::uint32_t const pool = dedicated_pool_;
  count_acquisition(a);
  region* r = new_region(a, pool);
  chunk* c = make_chunk(a.base, a.size, r);
  r->first = r->last = c;
  pools_[pool]->index.insert(*c);
  return c;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::trim_tail(std::uintptr_t base, std::size_t bytes) -> bool
{
  auto it = std::find_if(regions_.begin(), regions_.end(), [&](region const* r) { return r->base == base; });
  if (it == regions_.end()) return false;
  region* r = *it;
  chunk* tail = r->last;
  if (tail->in_use() || bytes == 0 || bytes >= tail->size || !backend_.release(r->end() - bytes, bytes)) return false;
  auto& ix = pools_[r->pool]->index;
  detail::resize_in_index(ix, *tail, tail->size - bytes);
  r->size -= bytes;
  count_release(bytes);
  return true;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::merge_candidate(std::uint32_t pool) const noexcept -> region*
{
  if (!backend_.supports_merging() || buddy()) return nullptr;
  std::uintptr_t next = 0;
  if constexpr (backend_traits<Backend>::next_address) next = backend_.next_address();
  for (region* r : regions_)
    if (r->pool == pool && next != 0 && r->end() == next) return r;
  return nullptr;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::grow_expandable(std::uint32_t pool, std::size_t need) -> alloc_status
{
  if constexpr (!requires(std::uintptr_t at, std::size_t n) {
                  backend_.reserve(n, n);
                  backend_.acquire_at(at, n);
                }) {
    return alloc_status::backend_refused;  // this backend cannot reserve address space
  } else {
    return map_into_reservation(pool, need);
  }
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::map_into_reservation(std::uint32_t pool, std::size_t need) -> alloc_status
{
  pool_entry& pe = *pools_[pool];
  if (pe.map_base == 0) {
    acquisition const r = backend_.reserve(pe.reservation_size, pe.page);
    if (!r) return alloc_status::backend_refused;
    pe.map_base = r.base;
    pe.reservation_end = r.end();
  }
  std::vector<region*> const mapped = pool_regions_by_address(pool);
  // The unmapped ranges in address order: before the first region, between regions, after
  // the last. Each with the free chunk before it, if any; then what follows while it is free
  // or unmapped (a free chunk that fills its region leads on to the next unmapped range).
  auto unmapped_start = [&](std::size_t i) { return i == 0 ? pe.map_base : mapped[i - 1]->end(); };
  auto unmapped_end = [&](std::size_t i) { return i == mapped.size() ? pe.reservation_end : mapped[i]->base; };
  chunk* start = nullptr;
  std::uintptr_t found_at = 0, found_end = 0;
  bool found = false;
  for (std::size_t i = 0; i <= mapped.size() && !found; ++i) {
    if (unmapped_start(i) == unmapped_end(i)) continue;
    found_at = unmapped_start(i);
    found_end = unmapped_end(i);
    start = i > 0 && !mapped[i - 1]->last->in_use() ? mapped[i - 1]->last : nullptr;
    std::size_t room = start != nullptr ? start->size : 0;
    for (std::size_t j = i;; ++j) {
      room += unmapped_end(j) - unmapped_start(j);
      if (room >= need || j == mapped.size()) break;
      chunk const* const first = mapped[j]->first;
      if (first->in_use()) break;
      room += first->size;
      if (room >= need || first->next != nullptr) break;
    }
    found = room >= need;
  }
  if (!found) return alloc_status::capacity;  // PyTorch would reserve another range: the device is full
  std::size_t const tail_free = start != nullptr ? start->size : 0;
  growth_context const ctx{findable_size<fit_type>(pe.index, need), backend_.acquired_bytes(), tail_free, pe.page};
  growth_decision const d = cfg_.growth.acquisition(ctx);
  if (d.bytes == 0 && tail_free < need) return d.refusal;
  chunk* c = start;
  while (c == nullptr || c->size < need) {
    // Map what the request still lacks, in whole pages, at the start of the unmapped range
    // that follows c (or of the range found).
    std::uintptr_t const at = c != nullptr ? c->end() : found_at;
    std::uintptr_t const limit = c != nullptr ? at + c->region()->unmapped_after : found_end;
    std::size_t const lacking = need - (c != nullptr ? c->size : 0);
    std::size_t const bytes = std::min(detail::round_up_to_multiple(lacking, pe.page), limit - at);
    if (bytes == 0) return alloc_status::capacity;  // the search found room; kept from looping should it not be there
    acquisition const a = backend_.acquire_at(at, bytes);
    if (!a) return bytes > backend_.capacity() - backend_.acquired_bytes() ? alloc_status::capacity : alloc_status::backend_refused;
    cfg_.growth.on_acquired(a.size);
    c = add_mapped_pages(pool, a);
  }
  expandable_candidate_ = c;
  return alloc_status::ok;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::add_mapped_pages(std::uint32_t pool, acquisition a) -> chunk*
{
  auto& ix = pools_[pool]->index;
  count_acquisition(a);
  region* before = nullptr;
  region* after = nullptr;
  for (region* r : regions_) {
    if (r->pool != pool) continue;
    if (r->end() == a.base) before = r;
    if (r->base == a.end()) after = r;
  }
  chunk* c;
  region* r = before;
  if (before != nullptr) {
    before->size += a.size;
    ++before->acquisitions;
    c = before->last;
    if (!c->in_use()) {
      detail::resize_in_index(ix, *c, c->size + a.size);
    } else {
      c = make_chunk(a.base, a.size, before);
      detail::append(before, c);
      ix.insert(*c);
    }
  } else {
    r = new_region(a, pool);
    c = make_chunk(a.base, a.size, r);
    r->first = r->last = c;
    ix.insert(*c);
  }
  if (after != nullptr) {  // the range between them is all mapped: one region, as PyTorch merges the blocks
    chunk* const first = after->first;
    for (chunk* k = first; k != nullptr; k = k->next) k->set_region(r);
    c->next = first;
    first->prev = c;
    r->last = after->last;
    r->size += after->size;
    r->acquisitions += after->acquisitions;
    r->live_chunks += after->live_chunks;
    regions_.erase(std::find(regions_.begin(), regions_.end(), after));
    regions_pool_.destroy(after);
    if (!first->in_use()) {
      std::size_t const joined = c->size + first->size;
      ix.erase(*first);
      chunks_.destroy(detail::unlink_next(c));
      detail::resize_in_index(ix, *c, joined);
    }
  }
  note_mapping_changed(pool);
  return c;
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::unmap_free_pages(std::uint32_t pool) -> std::size_t
{
  pool_entry const& pe = *pools_[pool];
  // Gathered first: unmapping cuts chunks and regions.
  std::vector<chunk*> free;
  for (region* r : regions_)
    if (r->pool == pool)
      for (chunk* c = r->first; c != nullptr; c = c->next)
        if (!c->in_use()) free.push_back(c);
  std::size_t unmapped = 0;
  for (chunk* c : free) {
    // Pages count from the reservation's base.
    std::uintptr_t const from = pe.map_base + detail::round_up_to_multiple(c->address - pe.map_base, pe.page);
    std::uintptr_t const to = pe.map_base + (c->end() - pe.map_base) / pe.page * pe.page;
    if (to <= from || !backend_.release(from, to - from)) continue;
    count_release(to - from);
    unmapped += to - from;
    remove_unmapped(pool, c, from, to - from);
  }
  if (unmapped != 0) note_mapping_changed(pool);
  return unmapped;
}

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::remove_unmapped(std::uint32_t pool, chunk* c, std::uintptr_t at, std::size_t bytes)
{
  auto& ix = pools_[pool]->index;
  region* const r = c->region();
  ix.erase(*c);
  if (at + bytes < c->end()) ix.insert(*detail::split_at(chunks_, c, at + bytes - c->address));
  chunk* hole = c;
  if (at > c->address) {
    hole = detail::split_at(chunks_, c, at - c->address);
    ix.insert(*c);
  }
  chunk* const before = hole->prev;
  chunk* const after = hole->next;
  if (after != nullptr) {  // the chunks above the hole form a region of their own
    region* const upper = new_region({after->address, r->end() - after->address}, pool);
    upper->first = after;
    upper->last = r->last;
    upper->free_since = r->free_since;
    after->prev = nullptr;
    for (chunk* k = after; k != nullptr; k = k->next) {
      k->set_region(upper);
      if (k->in_use() && !immediate_coalescing()) {
        ++upper->live_chunks;
        --r->live_chunks;
      }
    }
  }
  chunks_.destroy(hole);
  ++records_released_;
  if (before != nullptr) {
    before->next = nullptr;
    r->last = before;
    r->size = at - r->base;
  } else {
    regions_.erase(std::find(regions_.begin(), regions_.end(), r));
    regions_pool_.destroy(r);
  }
}

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::note_mapping_changed(std::uint32_t pool)
{
  std::vector<region*> const mapped = pool_regions_by_address(pool);
  for (std::size_t i = 0; i < mapped.size(); ++i)
    mapped[i]->unmapped_after = (i + 1 < mapped.size() ? mapped[i + 1]->base : pools_[pool]->reservation_end) - mapped[i]->end();
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::grow(std::uint32_t pool, std::size_t need) -> alloc_status
{
  if (pools_[pool]->page != 0) return grow_expandable(pool, need);
  region* candidate = merge_candidate(pool);
  bool const merge_tail = candidate != nullptr && cfg_.coalesce.mode != coalesce_mode::never;
  std::size_t const tail_free = merge_tail && !candidate->last->in_use() ? candidate->last->size : 0;
  std::size_t const findable = findable_size<fit_type>(pools_[pool]->index, need);
  if (findable < need) return alloc_status::size_overflow;
  growth_context const ctx{findable, backend_.acquired_bytes(), tail_free, acquisition_granularity()};
  growth_decision const d = cfg_.growth.acquisition(ctx);
  if (d.bytes == 0) return d.refusal;
  std::size_t bytes = d.bytes;
  for (;;) {
    std::size_t const alignment = buddy() ? detail::buddy::region_alignment(bytes, cfg_.size.granule()) : cfg_.size.granule();
    acquisition const a = backend_.acquire(bytes, alignment);
    if (a) {
      cfg_.growth.on_acquired(a.size);
      add_region(pool, a, candidate, merge_tail);
      return alloc_status::ok;
    }
    bool const over_capacity = bytes > backend_.capacity() || backend_.acquired_bytes() > backend_.capacity() - bytes;
    alloc_status const why = over_capacity ? alloc_status::capacity : alloc_status::backend_refused;
    bytes = cfg_.growth.on_refused(ctx, bytes);
    if (bytes == 0) return why;
  }
}

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::add_region(std::uint32_t pool, acquisition a, region* candidate, bool merge_tail)
{
  auto& ix = pools_[pool]->index;
  count_acquisition(a);
  if (candidate != nullptr && candidate->end() == a.base) {
    // Adjacent to the pool's top region: extend it, and its free tail if there is one.
    chunk* tail = candidate->last;
    candidate->size += a.size;
    ++candidate->acquisitions;
    if (merge_tail && !tail->in_use()) {
      detail::resize_in_index(ix, *tail, tail->size + a.size);
      return;
    }
    chunk* c = make_chunk(a.base, a.size, candidate);
    detail::append(candidate, c);
    ix.insert(*c);
    return;
  }
  region* r = new_region(a, pool);
  if (buddy()) {
    detail::buddy::tile(r, ix, cfg_.size.granule(), [this](std::uintptr_t at, std::size_t n, region* in) { return make_chunk(at, n, in); });
    return;
  }
  chunk* c = make_chunk(a.base, a.size, r);
  r->first = r->last = c;
  ix.insert(*c);
}

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::count_release(std::size_t bytes) noexcept
{
  stats_.reserved_bytes -= bytes;
  stats_.total_released_bytes += bytes;
  ++stats_.releases;
}

template <class Policy, backend Backend>
inline void allocator<Policy, Backend>::count_acquisition(acquisition a) noexcept
{
  ++stats_.acquisitions;
  stats_.reserved_bytes += a.size;
  stats_.total_acquired_bytes += a.size;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
}

template <class Policy, backend Backend>
inline auto allocator<Policy, Backend>::new_region(acquisition a, std::uint32_t pool) -> region*
{
  region* r = regions_pool_.create();
  r->base = a.base;
  r->size = a.size;
  r->pool = pool;
  r->serial = next_region_serial_++;
  regions_.push_back(r);
  stats_.peak_regions = std::max(stats_.peak_regions, regions_.size());
  return r;
}

}  // namespace fraglab
