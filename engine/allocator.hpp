// The composing engine: one allocator built from a free index, a fit, a split rule, a
// coalescing rule, a growth rule, a size rule and a pool rule over a backend.
//
// Structure is chosen at compile time (the `Policy` bundle: the hot path has no virtual
// call, in the manner of Heap Layers, Berger, Zorn & McKinley, PLDI 2001); every number is
// a runtime parameter of its rule (the `config`), so a sweep never recompiles.
//
// allocate(size, alignment, stream):
//   round with the size rule (pad by alignment - granule when the alignment exceeds the
//   granule) -> ask the pool's index for a chunk under the fit -> on a miss: merge deferred
//   free neighbours, then grow by what the growth rule says and retry, then (if the growth
//   rule asks for it) release wholly free regions and grow once more -> carve: an aligned
//   front remainder and a split-off tail go back to the index as free chunks.
// deallocate(block): take the chunk from the reference allocate handed out, check that it
//   is live at that address, mark it free, coalesce per the rule.
// deallocate(address): the same, the chunk found by its address in the live-address map,
//   which is built on the first free by address: a replay that frees by reference never
//   pays for it (docs/performance.md, "Freeing by reference").
//
// The engine is single-threaded and deterministic; wrap it in locked_allocator for
// concurrent use.
#pragma once

#include "engine/chunk.hpp"
#include "engine/concepts.hpp"
#include "engine/detail/bits.hpp"
#include "engine/detail/chunk_pool.hpp"
#include "engine/detail/hot_cold.hpp"
#include "engine/detail/live_address_map.hpp"
#include "engine/part_traits.hpp"
#include "engine/results.hpp"
#include "engine/stats.hpp"
#include "policies/coalesce_rules.hpp"
#include "policies/fits.hpp"
#include "policies/growth_rules.hpp"
#include "policies/pool_rules.hpp"
#include "policies/reclaim_rules.hpp"
#include "policies/size_rules.hpp"
#include "policies/split_rules.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fraglab {

// A composition: the types of its parts. Numbers live in allocator::config.
template <class Index, class Fit, class Split = threshold_split, class Coalesce = coalescing,
          class Growth = growth_rule, class Size = quantum_size_rule, class Pools = stream_pool_rule,
          class Reclaim = no_reclaim>
struct policy {
  using index = Index;
  using fit = Fit;
  using split = Split;
  using coalesce = Coalesce;
  using growth = Growth;
  using size = Size;
  using pools = Pools;
  using reclaim = Reclaim;
};

template <class Policy, backend Backend>
class allocator {
 public:
  using policy_type = Policy;
  using backend_type = Backend;
  using index_spec = typename Policy::index;
  using fit_type = typename Policy::fit;
  using chunk = basic_chunk<index_spec>;
  using region = basic_region<chunk>;
  using index_type = typename index_spec::template index<chunk>;

  static_assert(free_index<index_type, chunk>);
  static_assert(serves<index_type, fit_type>, "this index does not serve this fit");
  static_assert(split_rule<typename Policy::split>);
  static_assert(size_rule<typename Policy::size>);
  static_assert(pool_rule<typename Policy::pools>);
  static_assert(growth_rule_for<typename Policy::growth, growth_context>);
  static_assert(coalesce_rule_for<typename Policy::coalesce, coalesce_mode>);
  using pool_key_type = pool_key_t<typename Policy::pools>;
  // The parts' optional hooks, resolved (and their declarations checked) in one place.
  using pool_part = pool_traits<typename Policy::pools, pool_key_type>;
  using size_part = size_traits<typename Policy::size>;
  using index_part = index_traits<index_type, chunk>;
  // Instantiated here, so that their checks of the declared hooks run for every composition.
  static_assert(sizeof(pool_part) + sizeof(size_part) + sizeof(index_part) > 0);

  struct config {
    typename index_spec::params index{};
    typename Policy::split split{};
    typename Policy::coalesce coalesce{};
    typename Policy::growth growth{};
    typename Policy::size size{};
    typename Policy::pools pools{};
    typename Policy::reclaim reclaim{};
  };

  explicit allocator(Backend b, config c = {}) : backend_(std::move(b)), cfg_(std::move(c))
  {
    cfg_.size.validate();
    cfg_.growth.validate();
    // An index checks its parameters as it is built, and a pool's index is built at the
    // pool's first request: built once here, a bad parameter is refused by the constructor,
    // not thrown out of some later allocate().
    (void)index_type(cfg_.index);
  }
  allocator(allocator const&) = delete;
  allocator& operator=(allocator const&) = delete;

  // Gives every region back. Members are declared so that the indexes and the live map,
  // which unlink chunks as they are destroyed, go before the chunk records' memory.
  ~allocator()
  {
    for (region* r : regions_) backend_.release(r->base, r->size);
  }

  FRAGLAB_HOT allocation allocate(std::size_t size, std::size_t alignment = 1, stream_id stream = 0)
  {
    return allocate_from<true>(size, alignment, stream);
  }

  // allocate() from the free chunks alone: a miss grows nothing, reclaims nothing and counts
  // as no failure (status no_growth). For a layer that tries its own sources between the
  // pool's search and its growth, as GMLake stitches between PyTorch's search and a new
  // segment (policies/presets/gmlake.hpp).
  allocation allocate_cached(std::size_t size, std::size_t alignment = 1, stream_id stream = 0)
  {
    return allocate_from<false>(size, alignment, stream);
  }

  // Marks [address, address + size) live where it lies inside one free chunk, cutting off
  // the free rest either side: for a layer that maps the same memory at a second address
  // and must keep the pages it uses there from being handed out again (GMLake's stitched
  // blocks). Counted as live and allocated bytes, not as an allocation; deallocate(address)
  // frees it. Returns false, changing nothing, where the range is not inside one free chunk
  // or is not a whole number of granules. Immediate coalescing only (buddies split by halves).
  bool claim(std::uintptr_t address, std::size_t size, stream_id stream = 0)
  {
    std::size_t const g = cfg_.size.granule();
    if (size == 0 || size % g != 0 || address % g != 0 || buddy()) return false;
    chunk* c = chunk_at(address);
    if (c == nullptr || c->in_use() || size > c->end() - address) return false;
    auto& ix = pools_[c->region()->pool]->index;
    ix.erase(*c);
    if (address > c->address) {
      chunk* const body = split_at(c, address - c->address);
      ix.insert(*c);
      c = body;
    }
    if (c->size > size) ix.insert(*split_at(c, size));
    enter_live(c, size, stream);
    stats_.live_bytes += size;
    stats_.allocated_bytes += size;
    stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    return true;
  }

  // The number of the pool `key` names, if a request has made it.
  [[nodiscard]] std::optional<std::uint32_t> find_pool(pool_key_type const& key) const noexcept
  {
    for (std::uint32_t i = 0; i < pools_.size(); ++i)
      if (pools_[i]->key == key && i != dedicated_pool_) return i;
    return std::nullopt;
  }

 private:
  template <bool Grow>
  [[gnu::always_inline]] inline allocation allocate_from(std::size_t size, std::size_t alignment, stream_id stream)
  {
    // Misuse first: a bad alignment is reported even for a zero-byte request.
    if (!detail::is_pow2(alignment)) return misuse(alloc_status::bad_alignment);
    if (size == 0) return {};
    std::size_t const granule = cfg_.size.granule();
    // What the chunk handed out will be. A size rule rounds a size of at least 1 to at least
    // 1 (docs/concepts.md), so 0 stands for its overflow: testing the optional kept its
    // flag on the stack.
    std::size_t chunk_size = cfg_.size.round(size).value_or(0);
    if (chunk_size == 0) [[unlikely]] return misuse(alloc_status::size_overflow);
    std::size_t need = chunk_size;       // what the search asks for
    if (alignment > granule && naturally_aligned(alignment)) {
      // Buddy chunks, and blocks carved from pages of one power-of-two class, are aligned to
      // their own size: ask for a block at least as large as the alignment instead of padding.
      if (alignment > (std::size_t{1} << 63)) return misuse(alloc_status::size_overflow);
      chunk_size = need = std::max(need, alignment);
    } else if (alignment > granule) {
      auto const padded = detail::add_checked(need, alignment - granule);
      if (!padded) return misuse(alloc_status::size_overflow);
      need = *padded;
    }
    if (buddy()) {
      if (need > (std::size_t{1} << 63)) return misuse(alloc_status::size_overflow);
      chunk_size = need = std::bit_ceil(need);
    }
    pool_key_type const key = cfg_.pools.pool_key(stream, chunk_size);
    if constexpr (reclaim_part::on_search) cfg_.reclaim.on_search(key);
    std::uint32_t pool = pool_for(key);
    chunk* c = fit_type::select(pools_[pool]->index, need);
    if (c == nullptr) [[unlikely]] {
      if constexpr (!Grow) return {0, 0, alloc_status::no_growth};
      miss_outcome const m = allocate_on_miss(pool, need);
      if (m.c == nullptr) {
        ++stats_.failed_allocations;
        return {0, 0, m.status};
      }
      c = m.c;
      pool = m.pool;
    }
    return hand_out(c, *pools_[pool], size, chunk_size, alignment, stream);
  }

 public:
  FRAGLAB_HOT free_status deallocate(std::uintptr_t address)
  {
    if (address == 0) return free_status::ok;
    if (!addresses_mapped_) [[unlikely]] map_addresses();
    chunk* c = live_.extract(address);
    if (c == nullptr) return diagnosed_misuse(address);
    return release_block(c);
  }

  // Frees the block `b` refers to (allocation::block()) without looking its address up;
  // a reference whose block is no longer live at its address is reported as a double free,
  // one that another allocator handed out as an unknown pointer, and neither changes
  // anything. A reference without a record is freed by its address.
  FRAGLAB_HOT free_status deallocate(block_ref b)
  {
    if (b.record == nullptr) return deallocate(b.address);
    chunk* const c = static_cast<chunk*>(b.record);
    if (!c->in_use() || c->address != b.address || c->live.owner != this) [[unlikely]] return misused_reference(b, c);
    // Live at its address, so the map (where built) holds it there: one lookup, to take it out.
    if (addresses_mapped_) [[unlikely]] (void)live_.extract(b.address);
    return release_block(c);
  }

  free_status deallocate(void* p) { return deallocate(reinterpret_cast<std::uintptr_t>(p)); }

 private:
  // The live chunk c, out of the address map already, becomes free: statistics, coalescing
  // or deferral per the rule, and what the pool and reclaim rules do after a free.
  FRAGLAB_HOT free_status release_block(chunk* c)
  {
    stats_.live_bytes -= c->live.requested;
    c->make_free();
    stats_.allocated_bytes -= c->size;
    --stats_.live_chunks;
    ++stats_.deallocations;
    // The region record is a cache line of its own; with one pool and immediate coalescing
    // a free does not read it (region_is_idle).
    pool_entry& pool = pools_.size() == 1 ? *pools_.front() : *pools_[c->region()->pool];
    auto& ix = pool.index;
    if (immediate_coalescing()) {
      c = coalesce_into_index(c, ix);
      // region_is_idle() asked of the chunk rather than the region: a free chunk without
      // neighbours covers its region, and the region's record is not read.
      if (c->prev == nullptr && c->next == nullptr) [[unlikely]] note_idle(c->region());
    } else {
      region* const r = c->region();
      if (--r->live_chunks == 0) note_idle(r);
      if (buddy()) c = merge_buddies(c, ix);
      ix.insert(*c);
    }
    if (maps_dedicated && pool.dedicated) {
      release(c->region());  // a mapping of its own goes back as soon as its block is freed
      return free_status::ok;
    }
    if constexpr (reclaim_part::after_free) {
      reclaim_view view{*this};
      cfg_.reclaim.after_free(view, c->size, c->next == nullptr, c->region()->base);
    }
    return free_status::ok;
  }

  // A block reference that does not name a block live at its address. It came from
  // allocate, so its address started a block once: inside a live chunk now (merged into
  // it, or a new block there under another record) or inside a free one, the block was
  // freed before; outside every region, its region was given back.
  FRAGLAB_COLD free_status misused_reference(block_ref b, chunk const* c)
  {
    if (c->in_use() && c->address == b.address) {  // live, but another allocator's
      count_misuse();
      return free_status::unknown_pointer;
    }
    free_status const s = diagnosed_misuse(b.address);
    return s == free_status::interior_pointer ? free_status::double_free : s;
  }

  // A free of an address no live block starts at: counted, and said what it is.
  FRAGLAB_COLD free_status diagnosed_misuse(std::uintptr_t address) noexcept
  {
    ++stats_.misuses;
    return diagnose(address);
  }

  // From now on every live chunk is in the address map: the ones live now are entered,
  // and enter_live() enters the rest. If memory runs out on the way, the map is emptied
  // again, so that the next free by address starts over.
  FRAGLAB_COLD void map_addresses()
  {
    try {
      for (region const* r : regions_)
        for (chunk* c = r->first; c != nullptr; c = c->next)
          if (c->in_use()) live_.insert(*c);
    } catch (...) {
      live_.clear();
      throw;
    }
    addresses_mapped_ = true;
  }

 public:

  // Gives every region without a live block back to the backend (PyTorch's empty_cache).
  // Returns the bytes released.
  std::size_t release_free_regions()
  {
    std::size_t released = 0;
    for (auto& pe : pools_)
      if (pe->page != 0) released += unmap_free_tail(*pe);
    // Highest address first, so that an sbrk-like backend can lower its top region by region.
    std::vector<region*> order(regions_);
    std::sort(order.begin(), order.end(), [](region const* a, region const* b) { return a->base > b->base; });
    for (region* r : order) {
      std::size_t const size = r->size;
      if (release(r)) released += size;
    }
    return released;
  }

  // Gives back the region that starts at `base`, if it holds no live block and the backend
  // accepts it (a replay applying a recorded segment_free). Returns whether it did.
  bool release_region(std::uintptr_t base)
  {
    for (region* r : regions_)
      if (r->base == base) return release(r);
    return false;
  }

  // A block to recreate by restore_region(): a live chunk of `size` bytes at `address`.
  struct restored_block {
    std::uintptr_t address;
    std::size_t size;
    std::size_t requested;
    stream_id stream;
  };

  // Recreates a region the backend already holds (a snapshot's segment), with live chunks
  // where `live` says (sorted by address, inside the region, granule-aligned) and free
  // chunks in the gaps, in the pool `pool_key` names; in an expandable pool, the mapped
  // part of its reservation, which then starts at the region. For replays that start from a
  // recorded state. Throws std::invalid_argument on an impossible layout.
  void restore_region(acquisition a, pool_key_type pool_key, std::span<restored_block const> live)
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
      c->prev = r->last;
      if (r->last != nullptr) r->last->next = c;
      else r->first = c;
      r->last = c;
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

  [[nodiscard]] allocator_stats stats() const
  {
    allocator_stats s = stats_;
    s.regions = regions_.size();
    s.free_chunks = free_chunk_count();
    s.index_steps = index_steps();
    s.largest_free_bytes = largest_free_bytes();
    s.splits = chunks_.created() - records_tiling_acquisitions_;
    s.merges = chunks_.destroyed() - records_released_;
    return s;
  }

  // The running counters alone, without the derived fields stats() computes: cheap
  // enough to read after every event of a replay.
  [[nodiscard]] allocator_stats const& counters() const noexcept { return stats_; }

  [[nodiscard]] std::size_t largest_free_bytes() const
  {
    std::size_t largest = 0;
    for (auto const& p : pools_)
      if (chunk const* c = p->index.largest(); c != nullptr) largest = std::max(largest, c->size);
    return largest;
  }

  [[nodiscard]] std::size_t free_chunk_count() const noexcept
  {
    std::size_t n = 0;
    for (auto const& p : pools_) n += p->index.size();
    return n;
  }

  [[nodiscard]] std::uint64_t index_steps() const noexcept
  {
    std::uint64_t n = 0;
    for (auto const& p : pools_) n += p->index.steps();
    return n;
  }

  // Visits every chunk, regions in address order, chunks in address order within each.
  template <class F>
  void visit_chunks(F&& f) const
  {
    for (region const* r : regions_by_address())
      for (chunk const* c = r->first; c != nullptr; c = c->next) {
        live_fields const live = c->in_use() ? c->live : live_fields{0, 0, nullptr};
        f(chunk_view{c->address, c->size, live.requested, c->in_use(), live.stream, r->serial, r->pool});
      }
  }

  // Empty when the bookkeeping is consistent; otherwise a description of the first
  // violation found. Costs O(chunks * index lookup): for tests and debugging.
  [[nodiscard]] std::string check_invariants() const;

  [[nodiscard]] Backend& backend() noexcept { return backend_; }
  [[nodiscard]] Backend const& backend() const noexcept { return backend_; }
  [[nodiscard]] config const& configuration() const noexcept { return cfg_; }
  [[nodiscard]] std::size_t granule() const noexcept { return cfg_.size.granule(); }
  [[nodiscard]] std::size_t pool_count() const noexcept { return pools_.size(); }
  // The free index of a pool (for dumps and tests that look at its shape).
  [[nodiscard]] index_type& pool_index(std::uint32_t pool) noexcept { return pools_[pool]->index; }

 private:
  struct pool_entry {
    pool_key_type key;
    index_type index;
    bool dedicated = false;  // every block has a mapping of its own (pool rule's mapping_size)
    // Expandable pools (pool rule's reservation): one reserved address range, mapped in
    // pages from its start; map_end is where the next pages go.
    std::size_t page = 0;  // 0: an ordinary pool
    std::size_t reservation_size = 0;
    std::uintptr_t map_base = 0, map_end = 0, reservation_end = 0;
  };

  // The refusal is built where it is returned; only the count is out of line. A cold call
  // that returned the allocation itself wrote it through a pointer, which kept every
  // allocation's result in memory, two stores and two loads more (docs/performance.md, "Hot
  // and cold paths").
  allocation misuse(alloc_status s) noexcept
  {
    count_misuse();
    return {0, 0, s};
  }

  FRAGLAB_COLD void count_misuse() noexcept { ++stats_.misuses; }

  [[gnu::noinline]] bool release(region* r)
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
    stats_.reserved_bytes -= r->size;
    stats_.total_released_bytes += r->size;
    ++stats_.releases;
    regions_.erase(std::find(regions_.begin(), regions_.end(), r));
    regions_pool_.destroy(r);
    return true;
  }

  std::size_t free_region_bytes() const noexcept
  {
    std::size_t n = 0;
    for (region const* r : regions_)
      if (region_is_idle(r)) n += r->size;
    return n;
  }

  std::uint32_t pool_for(pool_key_type const& key)
  {
    // Each found pool is a constant, not a loaded index, so that nothing after waits on
    // the lookup: a table of pools by key (one dependent load more) cost pytorch_caching up
    // to 13% in time for fewer instructions (docs/performance.md, "pytorch_caching's pools").
    if (!pools_.empty() && pools_.front()->key == key) [[likely]] return 0;  // one pool, or the first stream
    if (pools_.size() > 1 && pools_[1]->key == key) return 1;  // the first stream's other pool (PyTorch's)
    return other_pool(key);
  }

  FRAGLAB_COLD std::uint32_t other_pool(pool_key_type const& key)
  {
    for (std::uint32_t i = 2; i < pools_.size(); ++i)  // pool_for has compared the first two
      if (pools_[i]->key == key) return i;
    auto entry = std::make_unique<pool_entry>(pool_entry{key, index_type(cfg_.index)});
    if constexpr (pool_part::reservation) {
      if (auto const spec = cfg_.pools.reservation(key)) {
        entry->page = spec->page;
        entry->reservation_size = spec->size;
      }
    }
    pools_.push_back(std::move(entry));
    return static_cast<std::uint32_t>(pools_.size() - 1);
  }

  // What a miss came to: the chunk that serves the request and the pool it came from (a
  // dedicated mapping's may not be the request's), or a null chunk and why. Returned by value
  // (two registers) rather than through references, which kept the hit path's pool and status
  // in stack slots for every allocation.
  struct miss_outcome {
    chunk* c;
    std::uint32_t pool;
    alloc_status status;
  };

  [[gnu::noinline]] miss_outcome allocate_on_miss(std::uint32_t pool, std::size_t need)
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
      // An expandable pool serves its miss from the free tail it has extended (or found large
      // enough), whatever the index's rules would say of that block: PyTorch's
      // try_allocate_expandable_block hands its candidate over without get_free_block's
      // oversize rules.
      if (pools_[pool]->page != 0)
        if (chunk* tail = free_tail(pool); tail != nullptr && tail->size >= need) return {tail, pool, alloc_status::ok};
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

  bool pool_holds_memory(std::uint32_t pool) const noexcept
  {
    return std::any_of(regions_.begin(), regions_.end(), [&](region const* r) { return r->pool == pool; });
  }

  // A block with a mapping of its own (dlmalloc's mmap path): a region in the dedicated pool,
  // from the backend's separate space, never split, released when freed.
  chunk* map_dedicated(std::size_t bytes)
  {
    acquisition a;
    if constexpr (requires { backend_.acquire_mapping(bytes); }) a = backend_.acquire_mapping(bytes);
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

  bool trim_tail(std::uintptr_t base, std::size_t bytes)
  {
    auto it = std::find_if(regions_.begin(), regions_.end(), [&](region const* r) { return r->base == base; });
    if (it == regions_.end()) return false;
    region* r = *it;
    chunk* tail = r->last;
    if (tail->in_use() || bytes == 0 || bytes >= tail->size || !backend_.release(r->end() - bytes, bytes)) return false;
    auto& ix = pools_[r->pool]->index;
    resize_in_index(ix, *tail, tail->size - bytes);
    r->size -= bytes;
    stats_.reserved_bytes -= bytes;
    stats_.total_released_bytes += bytes;
    ++stats_.releases;
    return true;
  }

  // What a reclaim rule may see and do on a miss: list wholly free regions, release them.
  class reclaim_view {
   public:
    explicit reclaim_view(allocator& a) noexcept : a_(a) {}
    // f(free_region const&) for each region without live blocks, in creation order. Do not
    // release from inside f: collect first.
    template <class F>
    void for_each_free_region(F&& f) const
    {
      for (region const* r : a_.regions_)
        if (a_.region_is_idle(r))
          f(free_region<pool_key_type>{r->base, r->size, a_.pools_[r->pool]->key, r->free_since, r->first == r->last});
    }
    bool release(std::uintptr_t base) { return a_.release_region(base); }
    // Gives `bytes` (a multiple of the backend's granularity, less than the chunk) from the
    // end of the free last chunk of the region at `base` back to the backend, if the backend
    // takes them (sbrk with a negative increment). Returns whether it did.
    bool trim_region_tail(std::uintptr_t base, std::size_t bytes) { return a_.trim_tail(base, bytes); }
    [[nodiscard]] std::size_t reserved_bytes() const noexcept { return a_.stats_.reserved_bytes; }

   private:
    allocator& a_;
  };
  using reclaim_part = reclaim_traits<typename Policy::reclaim, reclaim_view, pool_key_type>;
  static_assert(sizeof(reclaim_part) > 0);

  // `owner` is the pool whose index holds c: the request's, or a dedicated mapping's.
  FRAGLAB_HOT allocation hand_out(chunk* c, pool_entry& owner, std::size_t requested, std::size_t rounded,
                                  std::size_t alignment, stream_id stream)
  {
    auto& ix = owner.index;
    if constexpr (updates_in_place) {
      if (alignment <= cfg_.size.granule() && !buddy()) {
        // One index update, not two. An address-ordered index keeps its record as the
        // remainder: the head is cut off under a new record, and the indexed chunk only moves
        // its start up past it, so no node is relinked. A size-ordered one exchanges the
        // chunk for the tail cut off under a new record (no update at all where the tail's
        // key falls in the node's place).
        if (!splits(owner, *c, rounded)) {
          ix.erase(*c);
          return mark_live(c, requested, stream);
        }
        std::size_t const whole = c->size;
        if constexpr (in_place_index<index_type, chunk>) {
          chunk* const head = split_head(c, rounded);
          ix.resized(*c, whole);
          return mark_live(head, requested, stream);
        } else {
          ix.exchange(*c, whole, *split_at(c, rounded));
          return mark_live(c, requested, stream);
        }
      }
    }
    ix.erase(*c);
    if (alignment > cfg_.size.granule()) {
      std::uintptr_t const aligned = detail::align_up_address(c->address, alignment);
      if (aligned != c->address) {
        chunk* body = split_at(c, aligned - c->address);
        ix.insert(*c);
        c = body;
      }
    }
    if (buddy()) {
      while (c->size > rounded) ix.insert(*split_at(c, c->size / 2));
    } else if (splits(owner, *c, rounded)) {
      ix.insert(*split_at(c, rounded));
    }
    return mark_live(c, requested, stream);
  }

  // c holds a live block from now on: its fields, its region's count where one is kept
  // (region_is_idle), and its entry in the address map.
  void enter_live(chunk* c, std::size_t requested, stream_id stream)
  {
    c->make_live(requested, stream, this);
    if (!immediate_coalescing()) ++c->region()->live_chunks;
    ++stats_.live_chunks;
    if (addresses_mapped_) [[unlikely]] live_.insert(*c);
  }

  // enter_live() for an allocation, counted in the statistics.
  allocation mark_live(chunk* c, std::size_t requested, stream_id stream)
  {
    enter_live(c, requested, stream);
    ++stats_.allocations;
    stats_.live_bytes += requested;
    stats_.allocated_bytes += c->size;
    stats_.total_requested_bytes += requested;
    stats_.total_allocated_bytes += c->size;
    // Peaks as branches, not max(): a new high is rare, so the store is skipped.
    if (c->size > stats_.largest_chunk_allocated) [[unlikely]] stats_.largest_chunk_allocated = c->size;
    if (stats_.live_chunks > stats_.peak_live_chunks) [[unlikely]] stats_.peak_live_chunks = stats_.live_chunks;
    if (stats_.live_bytes > stats_.peak_live_bytes) [[unlikely]] stats_.peak_live_bytes = stats_.live_bytes;
    if (stats_.allocated_bytes > stats_.peak_allocated_bytes) [[unlikely]] stats_.peak_allocated_bytes = stats_.allocated_bytes;
    return {c->address, c->size, alloc_status::ok, c};
  }

  // Cuts c at `offset`; c keeps the low part, the returned chunk (free, unindexed) the rest.
  chunk* split_at(chunk* c, std::size_t offset)
  {
    chunk* n = chunks_.create(c->address + offset, c->size - offset, c->region(), c, c->next);
    if (c->next != nullptr) c->next->prev = n;
    else c->region()->last = n;
    c->next = n;
    c->size = offset;
    return n;
  }

  // Cuts c at `offset` the other way round: the returned chunk (new, unindexed) takes the
  // low part, c keeps the rest and its record.
  chunk* split_head(chunk* c, std::size_t offset)
  {
    chunk* h = chunks_.create(c->address, offset, c->region(), c->prev, c);
    if (c->prev != nullptr) c->prev->next = h;
    else c->region()->first = h;
    c->prev = h;
    c->address += offset;
    c->size -= offset;
    return h;
  }

  // c absorbs its next neighbour, whose record is recycled.
  void absorb_next(chunk* c) noexcept
  {
    c->size += c->next->size;
    chunks_.destroy(unlink_next(c));
  }

  // c absorbs its previous neighbour, whose record is recycled: c's start moves down to it.
  void absorb_prev(chunk* c) noexcept
  {
    chunk* const p = c->prev;
    c->address = p->address;
    c->size += p->size;
    c->prev = p->prev;
    if (p->prev != nullptr) p->prev->next = c;
    else c->region()->first = c;
    chunks_.destroy(p);
  }

  // Takes c's next neighbour out of the region's address list (c's size is the caller's).
  chunk* unlink_next(chunk* c) noexcept
  {
    chunk* n = c->next;
    c->next = n->next;
    if (n->next != nullptr) n->next->prev = c;
    else c->region()->last = c;
    return n;
  }

  // c is free and not in the index; merges it with its free neighbours (next first, then
  // previous, as TF does) and leaves the surviving chunk in the index.
  chunk* coalesce_into_index(chunk* c, index_type& ix) noexcept
  {
    if constexpr (updates_in_place) {
      chunk* const n = c->next != nullptr && !c->next->in_use() ? c->next : nullptr;
      chunk* const p = c->prev != nullptr && !c->prev->in_use() ? c->prev : nullptr;
      if (p != nullptr) {  // the previous chunk grows where it is
        if (n != nullptr) {
          ix.erase(*n);
          absorb_next(c);
        }
        resize_in_index(ix, *p, p->size + c->size);
        chunks_.destroy(unlink_next(p));
        return p;
      }
      if (n != nullptr) {
        std::size_t const was = n->size;
        if constexpr (in_place_index<index_type, chunk>) {  // the next chunk grows down where it is
          absorb_prev(n);
          ix.resized(*n, was);
          return n;
        } else {  // c, grown, takes its next neighbour's place
          c->size += was;
          ix.exchange(*n, was, *c);
          chunks_.destroy(unlink_next(c));
          return c;
        }
      }
      ix.insert(*c);
      return c;
    } else {
      c = merge_free_neighbours(c, ix);
      ix.insert(*c);
      return c;
    }
  }

  // c, in the index, changes size; its address stays.
  void resize_in_index(index_type& ix, chunk& c, std::size_t size)
  {
    if constexpr (updates_in_place) {
      std::size_t const was = c.size;
      c.size = size;
      resized_in_index(ix, c, was);
    } else {
      ix.erase(c);
      c.size = size;
      ix.insert(c);
    }
  }

  // Whether the index splits and merges in place: by address alone (in_place_index: the
  // indexed record survives, and only its start or its size changes), or by a key it checks
  // on each exchange (keyed_in_place_index). hand_out, coalesce_into_index and the helper
  // below are where the two kinds differ.
  static constexpr bool updates_in_place =
      in_place_index<index_type, chunk> || keyed_in_place_index<index_type, chunk>;

  // c, indexed when its size was `was`, has grown or shrunk where it is.
  void resized_in_index(index_type& ix, chunk& c, std::size_t was) noexcept
  {
    if constexpr (in_place_index<index_type, chunk>) ix.resized(c, was);
    else ix.exchange(c, was, c);
  }

  // c is free and not in the index; merges it with free neighbours (next first, then
  // previous, as TF does) and returns the surviving chunk, still unindexed.
  chunk* merge_free_neighbours(chunk* c, index_type& ix) noexcept
  {
    if (c->next != nullptr && !c->next->in_use()) {
      ix.erase(*c->next);
      absorb_next(c);
    }
    if (c->prev != nullptr && !c->prev->in_use()) {
      chunk* p = c->prev;
      ix.erase(*p);
      absorb_next(p);
      c = p;
    }
    return c;
  }

  [[nodiscard]] bool buddy() const noexcept { return cfg_.coalesce.mode == coalesce_mode::buddy; }
  [[nodiscard]] bool immediate_coalescing() const noexcept { return cfg_.coalesce.mode == coalesce_mode::immediate; }

  // Whether a region holds no live block. Immediate coalescing leaves such a region as one
  // free chunk, which says so without a count; the other modes count live chunks per region
  // (region::live_chunks), a read and a write of the region record per allocation and free.
  [[nodiscard]] bool region_is_idle(region const* r) const noexcept
  {
    return immediate_coalescing() ? r->first == r->last && !r->first->in_use() : r->live_chunks == 0;
  }

  // r's last live block was just freed: the reclaim rule's clock starts for it.
  FRAGLAB_COLD void note_idle(region* r) noexcept
  {
    if constexpr (reclaim_part::clock) r->free_since = cfg_.reclaim.clock();
  }

  // Whether a block of at least `alignment` bytes is aligned to it: buddy chunks (regions
  // are aligned to their size), and simple segregated storage's blocks, carved in order from
  // pages of one class, up to the backend's page alignment.
  [[nodiscard]] bool naturally_aligned(std::size_t alignment) const noexcept
  {
    if (buddy()) return true;
    if constexpr (size_part::power_of_two_classes && pool_part::size_class_pools)
      return cfg_.size.power_of_two_classes && cfg_.pools.size_class_pools && alignment <= backend_.granularity();
    else return false;
  }

  // Whether handing c out for `rounded` bytes leaves a free remainder: never for a
  // dedicated mapping; else the split rule's answer, unless the index decides for chunks it
  // treats specially (dlmalloc's top chunk splits for any remainder).
  bool splits(pool_entry& owner, chunk const& c, std::size_t rounded) const
  {
    if (maps_dedicated && owner.dedicated) return false;
    if constexpr (index_part::split_override)
      if (std::optional<bool> const decided = owner.index.split_override(c, rounded)) return *decided;
    return cfg_.split.should_split(c.size, rounded);
  }

  static constexpr std::uint32_t no_pool = ~std::uint32_t{0};
  // Whether the pool rule gives some blocks a mapping of their own (dlmalloc's mmap path).
  // Where it cannot, frees and splits do not test for one (docs/performance.md, "Structure
  // fixed in the type").
  static constexpr bool maps_dedicated = pool_part::mapping_size;

  // c is free and not in the index; merges it with its buddy while the buddy is free and of
  // the same size (it is then c's address neighbour), and returns the survivor, unindexed.
  chunk* merge_buddies(chunk* c, index_type& ix) noexcept
  {
    for (;;) {
      bool const lower_half = ((c->address - c->region()->base) / c->size) % 2 == 0;
      chunk* b = lower_half ? c->next : c->prev;
      if (b == nullptr || b->in_use() || b->size != c->size) return c;
      ix.erase(*b);
      if (!lower_half) c = b;
      absorb_next(c);
    }
  }

  // Deferred coalescing: merges every run of adjacent free chunks. Returns merges made.
  std::size_t coalesce_all_free()
  {
    std::size_t merges = 0;
    for (region* r : regions_) {
      auto& ix = pools_[r->pool]->index;
      for (chunk* c = r->first; c != nullptr; c = c->next) {
        if (c->in_use() || c->next == nullptr || c->next->in_use()) continue;
        ix.erase(*c);
        while (c->next != nullptr && !c->next->in_use()) {
          ix.erase(*c->next);
          absorb_next(c);
          ++merges;
        }
        ix.insert(*c);
      }
    }
    return merges;
  }

  // The region of this pool that the next acquisition will extend, if any: the backend
  // merges acquisitions and says where the next one starts, and a region ends there.
  region* merge_candidate(std::uint32_t pool) const noexcept
  {
    if (!backend_.supports_merging() || buddy()) return nullptr;
    std::uintptr_t next = 0;
    if constexpr (requires { backend_.next_address(); }) next = backend_.next_address();
    for (region* r : regions_)
      if (r->pool == pool && next != 0 && r->end() == next) return r;
    return nullptr;
  }

  // An expandable pool maps pages at the end of its reservation, extending its free tail.
  alloc_status grow_expandable(std::uint32_t pool, std::size_t need)
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

  alloc_status map_into_reservation(std::uint32_t pool, std::size_t need)
  {
    pool_entry& pe = *pools_[pool];
    if (pe.map_base == 0) {
      acquisition const r = backend_.reserve(pe.reservation_size, pe.page);
      if (!r) return alloc_status::backend_refused;
      pe.map_base = pe.map_end = r.base;
      pe.reservation_end = r.end();
    }
    region* const candidate = mapped_end_region(pool);
    std::size_t const tail_free = candidate != nullptr && !candidate->last->in_use() ? candidate->last->size : 0;
    if (tail_free >= need) return alloc_status::ok;  // the tail serves as it is (the index refused it as oversize)
    std::size_t const findable = findable_size<fit_type>(pe.index, need);
    growth_context const ctx{findable, backend_.acquired_bytes(), tail_free, pe.page};
    growth_decision const d = cfg_.growth.acquisition(ctx);
    if (d.bytes == 0) return d.refusal;
    if (d.bytes > pe.reservation_end - pe.map_end) return alloc_status::capacity;
    acquisition const a = backend_.acquire_at(pe.map_end, d.bytes);
    if (!a) return d.bytes > backend_.capacity() - backend_.acquired_bytes() ? alloc_status::capacity : alloc_status::backend_refused;
    pe.map_end = a.end();
    cfg_.growth.on_acquired(a.size);
    add_region(pool, a, candidate, true);
    return alloc_status::ok;
  }

  // The region of an expandable pool that ends where its mapping ends, if any.
  region* mapped_end_region(std::uint32_t pool) const noexcept
  {
    region* found = nullptr;
    for (region* r : regions_)
      if (r->pool == pool && r->end() == pools_[pool]->map_end) found = r;
    return found;
  }

  // The free block at the end of an expandable pool's mapping, if any.
  chunk* free_tail(std::uint32_t pool) const noexcept
  {
    region const* r = mapped_end_region(pool);
    return r != nullptr && !r->last->in_use() ? r->last : nullptr;
  }

  // empty_cache for an expandable pool: unmap the whole pages of its free tail (a region
  // left with no live block goes entirely). Returns the bytes unmapped.
  std::size_t unmap_free_tail(pool_entry& pe)
  {
    for (region* r : regions_) {
      if (pools_[r->pool].get() != &pe || r->end() != pe.map_end || r->last->in_use()) continue;
      std::size_t const size = r->size;
      if (region_is_idle(r)) {
        std::uintptr_t const base = r->base;
        if (!release(r)) return 0;
        pe.map_end = base;
        return size;
      }
      // Pages count from the reservation's base.
      std::uintptr_t const keep_to = pe.map_base + detail::round_up_to_multiple(r->last->address - pe.map_base, pe.page);
      std::size_t const bytes = r->end() > keep_to ? r->end() - keep_to : 0;
      if (bytes == 0 || !trim_tail(r->base, bytes)) return 0;
      pe.map_end -= bytes;
      return bytes;
    }
    return 0;
  }

  alloc_status grow(std::uint32_t pool, std::size_t need)
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
      // Buddy offsets are relative to the region's base: aligning the base to its largest
      // power of two makes every buddy chunk aligned to its own size in absolute terms.
      std::size_t const alignment = buddy() ? std::max(cfg_.size.granule(), std::bit_floor(bytes)) : cfg_.size.granule();
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

  // What every acquisition is a multiple of: the backend's granularity, or the size rule's
  // granule where that is larger (both powers of two), since every chunk's size is a multiple
  // of the granule. The backend rounds only to its own: a quantum of 8 KiB on a heap of 4 KiB
  // pages, or a backend of 8-byte granularity under TF's 256 B, left a region's last chunk
  // short of a granule (fuzz_policy_params).
  [[nodiscard]] std::size_t acquisition_granularity() const noexcept
  {
    return std::max<std::size_t>(cfg_.size.granule(), backend_.granularity());
  }

  void add_region(std::uint32_t pool, acquisition a, region* candidate, bool merge_tail)
  {
    auto& ix = pools_[pool]->index;
    count_acquisition(a);
    if (candidate != nullptr && candidate->end() == a.base) {
      // Adjacent to the pool's top region: extend it, and its free tail if there is one.
      chunk* tail = candidate->last;
      candidate->size += a.size;
      ++candidate->acquisitions;
      if (merge_tail && !tail->in_use()) {
        resize_in_index(ix, *tail, tail->size + a.size);
        return;
      }
      chunk* c = make_chunk(a.base, a.size, candidate);
      c->prev = tail;
      tail->next = c;
      candidate->last = c;
      ix.insert(*c);
      return;
    }
    region* r = new_region(a, pool);
    if (buddy()) {
      tile_with_powers_of_two(r, ix);
      return;
    }
    chunk* c = make_chunk(a.base, a.size, r);
    r->first = r->last = c;
    ix.insert(*c);
  }

  // Buddy: a region whose size is not a power of two is tiled by the largest powers of two
  // from its base, each then at an offset that is a multiple of its size.
  void tile_with_powers_of_two(region* r, index_type& ix)
  {
    std::size_t const granule = cfg_.size.granule();
    std::size_t offset = 0;
    while (r->size - offset >= granule) {
      std::size_t const size = std::bit_floor(r->size - offset);
      chunk* c = make_chunk(r->base + offset, size, r);
      c->prev = r->last;
      if (r->last != nullptr) r->last->next = c;
      else r->first = c;
      r->last = c;
      ix.insert(*c);
      offset += size;
    }
  }

  void count_acquisition(acquisition a) noexcept
  {
    ++stats_.acquisitions;
    stats_.reserved_bytes += a.size;
    stats_.total_acquired_bytes += a.size;
    stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  }

  // An empty region record for `a` in `pool`; the caller tiles it with chunks.
  region* new_region(acquisition a, std::uint32_t pool)
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

  chunk* make_chunk(std::uintptr_t address, std::size_t size, region* r)
  {
    ++records_tiling_acquisitions_;
    return chunks_.create(address, size, r, nullptr, nullptr);
  }

  // The chunk whose range holds `address`, or null.
  chunk* chunk_at(std::uintptr_t address) const noexcept
  {
    for (region const* r : regions_) {
      if (!r->contains(address)) continue;
      for (chunk* c = r->first; c != nullptr; c = c->next)
        if (address >= c->address && address < c->end()) return c;
    }
    return nullptr;
  }

  FRAGLAB_COLD free_status diagnose(std::uintptr_t address) const noexcept
  {
    chunk const* const c = chunk_at(address);
    if (c == nullptr) return free_status::unknown_pointer;
    return c->in_use() ? free_status::interior_pointer : free_status::double_free;
  }

  std::vector<region const*> regions_by_address() const
  {
    std::vector<region const*> order(regions_.begin(), regions_.end());
    std::sort(order.begin(), order.end(), [](region const* a, region const* b) { return a->base < b->base; });
    return order;
  }

  Backend backend_;
  config cfg_;
  detail::record_pool<chunk> chunks_;
  detail::record_pool<region> regions_pool_{16};
  std::vector<region*> regions_;
  std::vector<std::unique_ptr<pool_entry>> pools_;
  std::uint32_t dedicated_pool_ = no_pool;  // where blocks with a mapping of their own go
  detail::live_address_map<chunk> live_{cfg_.size.granule()};
  bool addresses_mapped_ = false;  // live_ holds every live chunk (since the first free by address)
  allocator_stats stats_;
  std::uint64_t next_region_serial_ = 0;
  // The records that did not come from a split or go to a merge: those that tile a new
  // acquisition, and those a released region took with it. Every other record the pool
  // made was cut off a free chunk, and every other it took back was joined to one, so
  // stats() reads the splits and merges off the pool's counts, and no split or merge
  // counts anything of its own.
  std::uint64_t records_tiling_acquisitions_ = 0;
  std::uint64_t records_released_ = 0;
};

}  // namespace fraglab

#include "engine/detail/check_invariants.hpp"
