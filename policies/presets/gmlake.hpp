// GMLake's allocator: PyTorch's caching allocator with virtual memory stitching (Guo et al.,
// ASPLOS 2024; intelligent-machine-learning/glake, GMLake/src/CUDACachingAllocator.cpp, the
// PyTorch 1.13/2.0-based release), as a layer over the engine running PyTorch's rules.
//
// Rules reproduced:
// - primitive blocks: PyTorch's caching allocator (pytorch_caching.hpp: pools per stream,
//   2/20 MiB segments, best fit, oversize rules, split rules, release and retry), with
//   GMLake's rounding: a request above 1 MiB rounds up to whole 2 MiB pages, the physical
//   chunk every segment of the large pool is made of (cuMemCreate's granularity);
// - a request of the large pool, in order:
//   1. the best-fitting free primitive block of its stream (PyTorch's search);
//   2. where the pool holds no free block at least as large: the smallest reusable stitched
//      block of its stream at least as large, if no larger than reuse_limit x the request
//      (reuseLimit, 10); its first request / 2 MiB pages are pinned, the rest stay free for
//      other blocks, and the whole stitched range is handed out;
//   3. for requests of at least frag_limit (fragLimit, 512 MiB): stitching. The stream's free
//      large blocks, largest first (highest address first among equals), are taken until
//      they hold the request; where that leaves 2 MiB or more over, the last is split and
//      keeps the rest free. Their pages, in that order, are mapped into a new virtual range
//      handed out whole. At least two free blocks are needed, as in GMLake;
//   4. PyTorch's miss path: a new segment, release of cached oversize blocks and a retry,
//      empty_cache and a last retry. GMLake tries stitching again between these steps; it
//      cannot succeed there where step 3 failed (each step only removes free blocks), so it
//      is not repeated.
// - a stitched block is reusable while it is not handed out and none of its pages is in
//   use by any block; freeing one frees the pages it pinned, which merge as PyTorch's blocks
//   do;
// - garbage collection (autoGC, 1000 GB): when the stitched ranges' virtual bytes exceed
//   auto_gc_limit after a stitch, and at empty_cache, every stitched block not handed out is
//   dropped (its virtual range unmapped; no physical memory moves);
// - a primitive segment given back drops the stitched blocks that map its pages (one handed
//   out goes at its free).
// - reserved bytes are the primitive segments' (physical) bytes; stitched virtual bytes are
//   counted apart (stitched_bytes()).
//
// Left out: defragLevel 1 (stitch only after a new segment failed); CUDA events and
// cross-stream use (a free is final at once); the GC's order by last use (it drops every
// idle stitched block at once, as GMLake's GC does at empty_cache); roundup_power2_divisions
// and garbage_collection_threshold (GMLake's base reads them, its rounding to pages does not
// compose with the divisions; the garbage collection counts searches the layer makes twice);
// the small pool's blocks are PyTorch's (GMLake never stitches them); a dropped stitched
// range is unmapped, but its reservation is kept (a simulated space never runs out of
// addresses; on a device the reservations of dropped ranges stay until the allocator goes).
// Stitching maps pages at a second address: the simulated backend models it, and cuda_vmm
// maps each page's physical handle again (map_alias: cuMemMap into a cuMemAddressReserve
// range), as GMLake's VmmSegment does.
#pragma once

#include <fraglab/backends/observed_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/engine/stitched_blocks.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/policies/presets/pytorch_caching.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace fraglab::presets::gmlake {

inline constexpr std::size_t page = std::size_t{2} << 20;  // kGranularity: the physical chunk

// PyTorch's rounding, with every large-pool size rounded up to whole pages.
struct size_rule {
  void validate() const noexcept {}
  [[nodiscard]] std::size_t granule() const noexcept { return pytorch::min_block; }
  [[nodiscard]] std::optional<std::size_t> round(std::size_t size) const noexcept
  {
    auto const blocks = detail::round_up_checked(size < pytorch::min_block ? pytorch::min_block : size, pytorch::min_block);
    if (!blocks || *blocks <= pytorch::small_size) return blocks;
    return detail::round_up_checked(size, page);
  }
};

using primitive_policy =
    fraglab::policy<pytorch::block_pool_index, best_fit, pytorch::split_rule, fixed_coalescing<coalesce_mode::immediate>,
                    growth_rule, size_rule, pytorch::pool_rule, pytorch::reclaim_rule>;

struct settings {
  std::size_t max_split_size = pytorch::unlimited;
  std::size_t max_non_split_rounding = pytorch::large_buffer;
  std::size_t memory_limit = pytorch::unlimited;
  bool stitching = true;                               // vmmDefragment
  std::size_t frag_limit = std::size_t{512} << 20;     // fragLimit
  double reuse_limit = 10.0;                           // reuseLimit
  std::size_t auto_gc_limit = std::size_t{1000} << 30;  // autoGC (GB)

  // GMLake's own keys (the others are PyTorch's, read in MiB or as a fraction).
  static constexpr std::string_view part = "gmlake";
  static constexpr auto parameters()
  {
    return std::tuple{
        parameter("vmm_defragment", &settings::stitching,
                  "stitch free blocks into new virtual ranges (GMLake's vmmDefragment); false: PyTorch's allocator with 2 MiB pages"),
        parameter("frag_limit", &settings::frag_limit, "requests at least this large may be served by stitching free blocks (fragLimit)"),
        parameter("reuse_limit", &settings::reuse_limit, "a stitched block serves a request at most this many times smaller (reuseLimit)"),
        parameter("auto_gc_limit", &settings::auto_gc_limit,
                  "after a stitch beyond this many stitched virtual bytes, drop every idle stitched block (autoGC)"),
    };
  }
};

template <backend Backend>
class allocator {
  using physical_backend = observed_backend<Backend, stitched_blocks>;
  using primitive_type = fraglab::allocator<primitive_policy, physical_backend>;

 public:
  using config = settings;

  explicit allocator(Backend b, settings s = {})
      : s_(s),
        stitched_(page, [this](std::uintptr_t at, std::size_t n) { primitive_.backend().unmap_alias(at, n); }),
        primitive_(physical_backend(std::move(b), &stitched_), primitive_config(s))
  {
    if (!(s_.reuse_limit >= 1.0)) throw std::invalid_argument("reuse_limit must be at least 1");
    if (s_.frag_limit <= pytorch::small_size) throw std::invalid_argument("frag_limit must be above 1 MiB: small blocks are never stitched");
    if (std::size_t const g = backend().granularity(); g == 0 || page % g != 0)
      throw std::invalid_argument("gmlake's 2 MiB pages must be whole pages of the backend (granularity " + std::to_string(g) + ")");
  }
  allocator(allocator const&) = delete;
  allocator& operator=(allocator const&) = delete;
  // The stitched ranges go before the segments their pages belong to.
  ~allocator() { stitched_.drop_all(); }

  allocation allocate(std::size_t size, std::size_t alignment = 1, stream_id stream = 0)
  {
    std::optional<std::size_t> const rounded = size_rule{}.round(size);
    bool const large = size != 0 && rounded && *rounded > pytorch::small_size;
    if (!large || !s_.stitching || alignment > page || !detail::is_pow2(alignment))
      return primitive(primitive_.allocate(size, alignment, stream), large);
    if (allocation const got = primitive_.allocate_cached(size, alignment, stream)) return primitive(got, true);
    if (allocation const got = reuse(size, *rounded, stream)) return got;
    if (allocation const got = stitch(size, *rounded, stream)) return got;
    return primitive(primitive_.allocate(size, alignment, stream), true);
  }

  free_status deallocate(std::uintptr_t address)
  {
    if (stitched_blocks::block* const b = stitched_.find(address)) return free_stitched(*b);
    return freed_primitive(address, primitive_.deallocate(address));
  }

  // By the record allocate() returned: the engine's for a primitive block (which refuses
  // another allocator's), a stitched block's own with its low bit set.
  free_status deallocate(block_ref r)
  {
    if (r.record == nullptr) return deallocate(r.address);
    if ((reinterpret_cast<std::uintptr_t>(r.record) & stitched_tag) == 0)
      return freed_primitive(r.address, primitive_.deallocate(r));
    stitched_blocks::block* const b = stitched_.find(r.address);
    if (b == nullptr || record_of(*b) != r.record) {  // another allocator's, or a block dropped since
      ++misuses_;
      return free_status::unknown_pointer;
    }
    return free_stitched(*b);  // a double free where b is not handed out
  }

  // empty_cache: wholly free segments go back, and GMLake's garbage collection drops every
  // stitched block not handed out.
  std::size_t release_free_regions()
  {
    std::size_t const released = primitive_.release_free_regions();
    (void)stitched_.drop_idle();
    return released;
  }

  // The engine's counts, with a stitched block counted as the one allocation it is rather
  // than as the chunks it pins.
  [[nodiscard]] allocator_stats const& counters() const
  {
    view_ = adjusted(primitive_.counters());
    return view_;
  }
  [[nodiscard]] allocator_stats stats() const
  {
    return adjusted(primitive_.stats());
  }
  [[nodiscard]] std::uint64_t index_steps() const noexcept { return primitive_.index_steps(); }
  [[nodiscard]] std::size_t largest_free_bytes() const { return primitive_.largest_free_bytes(); }
  [[nodiscard]] std::size_t free_chunk_count() const noexcept { return primitive_.free_chunk_count(); }
  template <class F>
  void visit_chunks(F&& f) const
  {
    primitive_.visit_chunks(std::forward<F>(f));
  }
  [[nodiscard]] Backend& backend() noexcept { return primitive_.backend().inner(); }
  [[nodiscard]] Backend const& backend() const noexcept { return primitive_.backend().inner(); }

  // The virtual bytes the stitched ranges take now and at most (apart from reserved bytes).
  [[nodiscard]] std::size_t stitched_bytes() const noexcept { return stitched_.bytes(); }
  [[nodiscard]] std::size_t peak_stitched_bytes() const noexcept { return stitched_.peak_bytes(); }
  [[nodiscard]] std::size_t stitched_count() const noexcept { return stitched_.count(); }
  [[nodiscard]] std::uint64_t stitches() const noexcept { return stitches_; }
  [[nodiscard]] std::uint64_t stitched_reuses() const noexcept { return reuses_; }

  [[nodiscard]] std::string check_invariants() const
  {
    if (std::string e = primitive_.check_invariants(); !e.empty()) return e;
    std::vector<stitched_blocks::range> live;
    primitive_.visit_chunks([&](chunk_view const& c) {
      if (c.in_use) live.push_back({c.address, c.size});
    });
    auto const in_use = [&](std::uintptr_t p) {
      auto const after = std::upper_bound(live.begin(), live.end(), p, [](std::uintptr_t a, auto const& r) { return a < r.address; });
      return after != live.begin() && p < std::prev(after)->address + std::prev(after)->size;
    };
    if (std::string e = stitched_.check(in_use); !e.empty()) return e;
    if (primitive_.counters().reserved_bytes > backend().capacity()) return "reserved bytes above the capacity";
    return {};
  }

 private:
  static typename primitive_type::config primitive_config(settings const& s)
  {
    pytorch::settings p;
    p.max_split_size = s.max_split_size;
    p.max_non_split_rounding = s.max_non_split_rounding;
    p.memory_limit = s.memory_limit;
    auto const pt = pytorch::make_config<physical_backend>(p);
    typename primitive_type::config c;
    c.index = pt.index;
    c.split = pt.split;
    c.coalesce = pt.coalesce;
    c.growth = pt.growth;
    c.pools = pt.pools;
    c.reclaim = pt.reclaim;
    return c;
  }

  static constexpr std::uintptr_t stitched_tag = 1;  // records are aligned: the low bit is free
  static void* record_of(stitched_blocks::block& b) noexcept
  {
    return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(&b) | stitched_tag);
  }

  // A primitive block handed out (or a failure): a large one's pages are in use.
  allocation primitive(allocation got, bool large)
  {
    if (got && large && got.address != 0) {
      large_live_[got.address] = got.size;
      stitched_.used(got.address, got.size);
    }
    if (got) note_peak();
    return got;
  }

  void note_peak() noexcept
  {
    peak_live_ = std::max(peak_live_, primitive_.counters().live_bytes - pinned_bytes_ + live_stitched_bytes_);
  }

  free_status free_stitched(stitched_blocks::block& b)
  {
    if (!b.handed_out) {
      ++misuses_;
      return free_status::double_free;
    }
    for (auto const& r : b.pinned) {
      (void)primitive_.deallocate(r.address);
      stitched_.freed(r.address, r.size);
      pinned_bytes_ -= r.size;
      --pinned_chunks_;
    }
    pinned_frees_ += b.pinned.size();
    live_stitched_bytes_ -= b.requested;
    --live_stitched_;
    ++stitched_frees_;
    stitched_.take_back(b);
    return free_status::ok;
  }

  // A primitive block's free came out as `s`: where it freed a large block, its pages are free.
  free_status freed_primitive(std::uintptr_t address, free_status s)
  {
    if (s != free_status::ok) return s;
    if (auto const it = large_live_.find(address); it != large_live_.end()) {
      stitched_.freed(address, it->second);
      large_live_.erase(it);
    }
    return s;
  }

  // Holds [address, address + n) live in the engine for stitched block b: one chunk where
  // the range lies in one free chunk, else page by page (pages of adjacent segments).
  void pin(stitched_blocks::block& b, std::uintptr_t address, std::size_t n)
  {
    if (primitive_.claim(address, n, b.stream)) {
      b.pinned.push_back({address, n});
    } else {
      for (std::size_t off = 0; off < n; off += page) {
        if (!primitive_.claim(address + off, page, b.stream)) throw std::logic_error("gmlake: a stitched page is not free");
        b.pinned.push_back({address + off, page});
      }
    }
    stitched_.used(address, n);
  }

  // b, its pages pinned, is handed out for `requested` bytes as `bytes`.
  allocation handed_out(stitched_blocks::block& b, std::size_t requested, std::size_t bytes)
  {
    for (auto const& r : b.pinned) pinned_bytes_ += r.size;
    pinned_chunks_ += b.pinned.size();
    live_stitched_bytes_ += requested;
    ++live_stitched_;
    ++stitched_allocations_;
    stitched_requested_total_ += requested;
    note_peak();
    return {b.address, bytes, alloc_status::ok, record_of(b)};
  }

  // Step 2: a stitched block that fits, where no primitive block could.
  allocation reuse(std::size_t size, std::size_t rounded, stream_id stream)
  {
    if (auto const pool = primitive_.find_pool(pytorch::pool_rule::key(stream, false))) {
      auto* const largest = primitive_.pool_index(*pool).largest();
      if (largest != nullptr && largest->size >= rounded) return {0, 0, alloc_status::no_growth};
    }
    stitched_blocks::block* b = stitched_.smallest_reusable(stream, rounded);
    if (b == nullptr || static_cast<double>(b->size) > static_cast<double>(rounded) * s_.reuse_limit)
      return {0, 0, alloc_status::no_growth};
    stitched_.hand_out(*b, size);
    std::size_t const keep = rounded / page;
    for (std::size_t i = 0; i < keep;) {
      std::size_t run = 1;
      while (i + run < keep && b->pages[i + run] == b->pages[i] + run * page) ++run;
      pin(*b, b->pages[i], run * page);
      i += run;
    }
    ++reuses_;
    return handed_out(*b, size, rounded);
  }

  // Maps the 2 MiB pages again from `at`, in the backend's own pages.
  bool map_alias(std::uintptr_t at, std::vector<std::uintptr_t> const& pages)
  {
    std::size_t const g = backend().granularity();
    if (g == page) return primitive_.backend().map_alias(at, pages);
    std::vector<std::uintptr_t> backend_pages;
    backend_pages.reserve(pages.size() * (page / g));
    for (std::uintptr_t p : pages)
      for (std::size_t off = 0; off < page; off += g) backend_pages.push_back(p + off);
    return primitive_.backend().map_alias(at, backend_pages);
  }

  // Step 3: free blocks, largest first, mapped into one new range.
  allocation stitch(std::size_t size, std::size_t rounded, stream_id stream)
  {
    allocation const none{0, 0, alloc_status::no_growth};
    if (rounded < s_.frag_limit) return none;
    auto const pool = primitive_.find_pool(pytorch::pool_rule::key(stream, false));
    if (!pool) return none;
    std::vector<stitched_blocks::range> free_blocks;
    primitive_.pool_index(*pool).for_each([&](auto const& c) { free_blocks.push_back({c.address, c.size}); });
    if (free_blocks.size() < 2) return none;
    std::sort(free_blocks.begin(), free_blocks.end(), [](auto const& a, auto const& b) {
      return a.size != b.size ? a.size > b.size : a.address > b.address;
    });
    std::size_t total = 0, taken = 0;
    while (taken < free_blocks.size() && total < rounded) {
      if (free_blocks[taken].size % page != 0 || free_blocks[taken].address % page != 0) return none;
      total += free_blocks[taken++].size;
    }
    if (total < rounded) return none;
    std::size_t const over = total - rounded;
    std::size_t const bytes = over >= page ? rounded : total;  // the last block keeps `over` free
    std::vector<std::uintptr_t> pages;
    pages.reserve(bytes / page);
    std::vector<stitched_blocks::range> parts;
    for (std::size_t i = 0; i < taken; ++i) {
      std::size_t const n = i + 1 == taken && over >= page ? free_blocks[i].size - over : free_blocks[i].size;
      parts.push_back({free_blocks[i].address, n});
      for (std::size_t off = 0; off < n; off += page) pages.push_back(free_blocks[i].address + off);
    }
    // A new virtual range with the pages mapped into it (cuMemAddressReserve, cuMemMap).
    acquisition const range = primitive_.backend().reserve(bytes, page);
    if (!range || !map_alias(range.base, pages)) return none;
    stitched_blocks::block& b = stitched_.add(range.base, stream, std::move(pages), size);
    for (auto const& part : parts) pin(b, part.address, part.size);
    ++stitches_;
    if (stitched_.bytes() > s_.auto_gc_limit) (void)stitched_.drop_idle();
    return handed_out(b, size, bytes);
  }

  allocator_stats adjusted(allocator_stats s) const
  {
    s.live_bytes = s.live_bytes - pinned_bytes_ + live_stitched_bytes_;
    s.live_chunks = s.live_chunks - pinned_chunks_ + live_stitched_;
    s.allocations += stitched_allocations_;
    s.deallocations = s.deallocations - pinned_frees_ + stitched_frees_;
    s.total_requested_bytes += stitched_requested_total_;
    s.misuses += misuses_;
    s.peak_live_bytes = peak_live_;
    return s;
  }

  settings s_;
  stitched_blocks stitched_;
  primitive_type primitive_;
  std::unordered_map<std::uintptr_t, std::size_t> large_live_;  // primitive large blocks: address -> chunk bytes
  std::size_t pinned_bytes_ = 0, pinned_chunks_ = 0, live_stitched_bytes_ = 0, live_stitched_ = 0;
  std::uint64_t pinned_frees_ = 0, stitched_frees_ = 0, stitched_allocations_ = 0, stitched_requested_total_ = 0;
  std::uint64_t stitches_ = 0, reuses_ = 0, misuses_ = 0;
  std::size_t peak_live_ = 0;  // of the caller's blocks: the engine's counts pinned pages instead
  mutable allocator_stats view_;
};

}  // namespace fraglab::presets::gmlake
