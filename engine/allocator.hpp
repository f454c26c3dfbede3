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
//
// This header is the engine's interface and its hot path. The machinery is in engine/detail/,
// a header a job: chunk_list.hpp (cutting and joining a region's chunks), coalescing.hpp
// (merging free neighbours with the index in step), buddy.hpp (the buddy system's halving and
// merging), regions.hpp (the miss path, growth, expandable pools, releasing regions),
// restore_region.hpp (a recorded state rebuilt), misuse.hpp (what a bad free names) and
// check_invariants.hpp.
#pragma once

#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/chunk.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/detail/buddy.hpp>
#include <fraglab/engine/detail/chunk_list.hpp>
#include <fraglab/engine/detail/chunk_pool.hpp>
#include <fraglab/engine/detail/coalescing.hpp>
#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/engine/detail/live_address_map.hpp>
#include <fraglab/engine/part_interface.hpp>
#include <fraglab/engine/part_traits.hpp>
#include <fraglab/engine/results.hpp>
#include <fraglab/engine/stats.hpp>

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
  using backend_part = backend_traits<Backend>;
  // Instantiated here, so that their checks of the declared hooks run for every composition.
  static_assert(sizeof(pool_part) + sizeof(size_part) + sizeof(index_part) + sizeof(backend_part) > 0);

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
    chunk* c = detail::find_chunk(regions_, address);
    if (c == nullptr || c->in_use() || size > c->end() - address) return false;
    auto& ix = pools_[c->region()->pool]->index;
    ix.erase(*c);
    if (address > c->address) {
      chunk* const body = detail::split_at(chunks_, c, address - c->address);
      ix.insert(*c);
      c = body;
    }
    if (c->size > size) ix.insert(*detail::split_at(chunks_, c, size));
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
      if (!detail::buddy::fits_chunk(need)) return misuse(alloc_status::size_overflow);
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
      c = detail::coalesce_into_index(chunks_, ix, c);
      // region_is_idle() asked of the chunk rather than the region: a free chunk without
      // neighbours covers its region, and the region's record is not read.
      if (c->prev == nullptr && c->next == nullptr) [[unlikely]] note_idle(c->region());
    } else {
      region* const r = c->region();
      if (--r->live_chunks == 0) note_idle(r);
      if (buddy()) c = detail::buddy::merge(chunks_, ix, c);
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
  FRAGLAB_COLD free_status misused_reference(block_ref b, chunk const* c);

  // A free of an address no live block starts at: counted, and said what it is.
  FRAGLAB_COLD free_status diagnosed_misuse(std::uintptr_t address) noexcept;

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
  std::size_t release_free_regions();

  // Gives back the region that starts at `base`, if it holds no live block and the backend
  // accepts it (a replay applying a recorded segment_free). Returns whether it did.
  bool release_region(std::uintptr_t base);

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
  // `reservation_base`, in an expandable pool whose reservation this starts, is where the
  // reservation starts when known to lie below the region (0: at the region).
  void restore_region(acquisition a, pool_key_type pool_key, std::span<restored_block const> live,
                      std::uintptr_t reservation_base = 0);

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
    // Expandable pools (pool rule's reservation): one reserved address range, mapped and
    // unmapped in whole pages counted from map_base; each mapped run of pages is a region,
    // so the pool's regions never touch, and the unmapped ranges lie between and after them.
    std::size_t page = 0;  // 0: an ordinary pool
    std::size_t reservation_size = 0;
    std::uintptr_t map_base = 0, reservation_end = 0;
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

  // Gives region r back, if it holds no live block and the backend takes it.
  [[gnu::noinline]] bool release(region* r);

  // The bytes of the regions without a live block.
  std::size_t free_region_bytes() const noexcept;

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

  // The miss path: merge deferred neighbours, map a dedicated block, let the reclaim rule act,
  // grow and search again, and release wholly free regions before a last growth, as the
  // rules ask (engine/detail/regions.hpp).
  [[gnu::noinline]] miss_outcome allocate_on_miss(std::uint32_t pool, std::size_t need);

  // Whether some region of the pool exists (a dedicated mapping's size may depend on it).
  bool pool_holds_memory(std::uint32_t pool) const noexcept;

  // A block with a mapping of its own (dlmalloc's mmap path): a region in the dedicated pool,
  // from the backend's separate space, never split, released when freed.
  chunk* map_dedicated(std::size_t bytes);

  // reclaim_view::trim_region_tail.
  bool trim_tail(std::uintptr_t base, std::size_t bytes);

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

  static constexpr bool updates_in_place = detail::updates_in_place<index_type, chunk>;

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
          chunk* const head = detail::split_head(chunks_, c, rounded);
          ix.resized(*c, whole);
          return mark_live(head, requested, stream);
        } else {
          ix.exchange(*c, whole, *detail::split_at(chunks_, c, rounded));
          return mark_live(c, requested, stream);
        }
      }
    }
    ix.erase(*c);
    if (alignment > cfg_.size.granule()) {
      std::uintptr_t const aligned = detail::align_up_address(c->address, alignment);
      if (aligned != c->address) {
        chunk* body = detail::split_at(chunks_, c, aligned - c->address);
        ix.insert(*c);
        c = body;
      }
    }
    if (buddy()) {
      detail::buddy::halve_to(chunks_, ix, c, rounded);
    } else if (splits(owner, *c, rounded)) {
      ix.insert(*detail::split_at(chunks_, c, rounded));
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

  // Deferred coalescing's sweep over every region. Returns the merges made.
  std::size_t coalesce_all_free()
  {
    return detail::coalesce_all_free(chunks_, regions_, [this](region const* r) -> index_type& { return pools_[r->pool]->index; });
  }

  // The region of this pool that the next acquisition will extend, if any: the backend
  // merges acquisitions and says where the next one starts, and a region ends there.
  region* merge_candidate(std::uint32_t pool) const noexcept;

  // An expandable pool maps pages into its reservation (map_into_reservation).
  alloc_status grow_expandable(std::uint32_t pool, std::size_t need);

  // PyTorch's find_expandable_block and try_allocate_expandable_block: the first unmapped
  // range, in address order, that with the free chunk before it and the free or unmapped
  // space after it holds `need` bytes is mapped, as little of it as the request needs, and
  // the free chunk that then holds the request is left in expandable_candidate_.
  alloc_status map_into_reservation(std::uint32_t pool, std::size_t need);

  // Maps `a` (pages of an unmapped range of `pool`) into the pool: it extends the region that
  // ends at a.base, or starts one, and joins the region that starts at its end. Returns the
  // free chunk that covers `a`, merged with its free neighbours.
  chunk* add_mapped_pages(std::uint32_t pool, acquisition a);

  // empty_cache for an expandable pool (PyTorch's release_blocks and unmap_block): every
  // free chunk gives back the whole pages inside it, which splits its region around the hole.
  // Returns the bytes unmapped.
  std::size_t unmap_free_pages(std::uint32_t pool);

  // The pages of `pool` [at, at + bytes) inside the free chunk c are unmapped already: c is
  // cut around them, and its region split in two (or shortened, or gone).
  void remove_unmapped(std::uint32_t pool, chunk* c, std::uintptr_t at, std::size_t bytes);

  // After a mapping or an unmapping in an expandable pool: each region's unmapped_after.
  void note_mapping_changed(std::uint32_t pool);

  // Acquires what the growth rule asks for a miss of `need` bytes in `pool` (retrying smaller
  // where the backend refuses and the rule says so) and adds it as a region or to the top one.
  alloc_status grow(std::uint32_t pool, std::size_t need);

  // What every acquisition is a multiple of: the backend's granularity, or the size rule's
  // granule where that is larger (both powers of two), since every chunk's size is a multiple
  // of the granule. The backend rounds only to its own: a quantum of 8 KiB on a heap of 4 KiB
  // pages, or a backend of 8-byte granularity under TF's 256 B, left a region's last chunk
  // short of a granule (fuzz_policy_params).
  [[nodiscard]] std::size_t acquisition_granularity() const noexcept
  {
    return std::max<std::size_t>(cfg_.size.granule(), backend_.granularity());
  }

  // An acquisition added to `pool`: extending `candidate` where it ends at a.base (its free
  // tail too, with merge_tail), else as a new region, tiled by one free chunk or by buddies.
  void add_region(std::uint32_t pool, acquisition a, region* candidate, bool merge_tail);

  // An acquisition in the statistics.
  void count_acquisition(acquisition a) noexcept;

  // Bytes given back to the backend, in the statistics.
  void count_release(std::size_t bytes) noexcept;

  // An empty region record for `a` in `pool`; the caller tiles it with chunks.
  region* new_region(acquisition a, std::uint32_t pool);

  chunk* make_chunk(std::uintptr_t address, std::size_t size, region* r)
  {
    ++records_tiling_acquisitions_;
    return chunks_.create(address, size, r, nullptr, nullptr);
  }

  // What `address`, which starts no live block, is: inside a live block, inside a free one,
  // or outside every region.
  FRAGLAB_COLD free_status diagnose(std::uintptr_t address) const noexcept;

  // The regions of `pool`, in address order.
  std::vector<region*> pool_regions_by_address(std::uint32_t pool) const
  {
    std::vector<region*> in_pool;
    for (region* r : regions_)
      if (r->pool == pool) in_pool.push_back(r);
    std::sort(in_pool.begin(), in_pool.end(), [](region const* a, region const* b) { return a->base < b->base; });
    return in_pool;
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
  chunk* expandable_candidate_ = nullptr;    // map_into_reservation's answer to allocate_on_miss
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

#include <fraglab/engine/detail/check_invariants.hpp>
#include <fraglab/engine/detail/misuse.hpp>
#include <fraglab/engine/detail/regions.hpp>
#include <fraglab/engine/detail/restore_region.hpp>
