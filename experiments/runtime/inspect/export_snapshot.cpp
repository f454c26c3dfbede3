#include <fraglab/runtime/inspect/export_snapshot.hpp>

#include <fraglab/runtime/pickle/pickle_writer.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

namespace fraglab {
namespace {

struct region_view {
  std::uintptr_t base = std::numeric_limits<std::uintptr_t>::max();
  std::size_t size = 0;
  stream_id stream = 0;
  std::uint32_t pool = 0;
};

// Regions by serial, from their chunks (which cover each region whole).
std::map<std::uint64_t, region_view> regions_of(any_allocator const& a)
{
  std::map<std::uint64_t, region_view> regions;
  a.visit_chunks([&](chunk_view const& v) {
    region_view& r = regions[v.region_serial];
    r.base = std::min(r.base, v.address);
    r.size += v.size;
    r.stream = v.stream;
    r.pool = v.pool;
  });
  return regions;
}

// The parts of `from`'s regions that no region of `to` in the same pool covers, each as
// f(base, size, stream): in an expandable pool, where a region may shrink or split at a hole
// or grow into one and join the next, the pages mapped or unmapped between two states.
template <class F>
void uncovered(std::map<std::uint64_t, region_view> const& from, std::map<std::uint64_t, region_view> const& to, F&& f)
{
  std::map<std::uint32_t, std::map<std::uintptr_t, std::uintptr_t>> covered;  // pool -> base -> end
  for (auto const& [serial, r] : to) covered[r.pool][r.base] = r.base + r.size;
  for (auto const& [serial, r] : from) {
    std::uintptr_t at = r.base;
    std::uintptr_t const end = r.base + r.size;
    for (auto const& [base, until] : covered[r.pool]) {
      if (until <= at || base >= end) continue;
      if (base > at) f(at, base - at, r.stream);
      at = std::max(at, until);
    }
    if (at < end) f(at, end - at, r.stream);
  }
}

constexpr std::size_t small_segment = std::size_t{2} << 20;
constexpr std::size_t small_block = std::size_t{1} << 20;  // PyTorch's small pool: blocks up to 1 MiB

}  // namespace

void export_pytorch_snapshot(composition const& c, trace::trace const& t, bool expandable_segments, std::ostream& out)
{
  auto a = c.make();
  pickle::writer w(out);
  w.begin_dict();
  w.text("device_traces");
  w.begin_list();
  for (int d = 0; d < t.device; ++d) {  // the devices before this one recorded nothing here
    w.begin_list();
    w.end_list();
  }
  w.begin_list();
  auto const event = [&](char const* action, std::uintptr_t addr, std::size_t size, stream_id stream) {
    w.begin_dict();
    w.entry("action", action);
    w.entry("addr", static_cast<std::int64_t>(addr));
    w.entry("size", static_cast<std::int64_t>(size));
    w.entry("stream", static_cast<std::int64_t>(stream));
    w.text("frames");
    w.begin_list();
    w.end_list();
  };

  std::vector<block_ref> block(t.slots);
  std::vector<std::size_t> size_of(t.slots, 0);  // the block handed out, as a free records it
  std::vector<bool> live(t.slots, false);
  std::uint64_t const restored = a->restore_start(t, block);
  if (restored != 0) {
    std::map<std::uintptr_t, std::size_t> restored_sizes;
    a->visit_chunks([&](chunk_view const& v) {
      if (v.in_use) restored_sizes[v.address] = v.size;
    });
    for (std::size_t i = 0; i < block.size(); ++i)
      if (block[i].address != 0) size_of[i] = restored_sizes[block[i].address];
  }
  for (std::size_t i = 0; i < block.size(); ++i) live[i] = block[i].address != 0;
  std::map<std::uint64_t, region_view> regions = regions_of(*a);
  // Which pool a segment is in. A whole segment is 2 MiB in PyTorch's small pool; an
  // expandable segment's mapped run may be any number of pages, so its pool is the one of the
  // blocks handed out inside it (the pools' reservations never overlap): the small pool's
  // blocks are at most 1 MiB.
  std::map<std::uintptr_t, bool> small_at;
  auto const small_pool = [&](region_view const& r) {
    if (!expandable_segments) return r.size == small_segment;
    auto const inside = small_at.lower_bound(r.base);
    return inside != small_at.end() && inside->first < r.base + r.size ? inside->second : r.size % (20 * small_block) != 0;
  };
  if (expandable_segments)
    for (std::size_t i = 0; i < block.size(); ++i)
      if (block[i].address != 0) small_at.emplace(block[i].address, size_of[i] <= small_block);
  allocator_stats before = a->counters();
  std::size_t const capacity = c.backend().capacity;
  // Segments acquired, released, grown or shrunk by the last event, as PyTorch records them.
  auto const segment_events = [&] {
    allocator_stats const& now = a->counters();
    if (now.reserved_bytes == before.reserved_bytes && now.acquisitions == before.acquisitions && now.releases == before.releases)
      return;
    before = now;
    std::map<std::uint64_t, region_view> const after = regions_of(*a);
    // A region of `from` missing from `to` is a whole segment (`whole`), one that `to` holds
    // smaller is pages at its end (`end`): releases and unmaps from before to after,
    // acquisitions and maps from after to before.
    auto const differences = [&](auto const& from, auto const& to, char const* whole, char const* end) {
      for (auto const& [serial, r] : from) {
        auto const other = to.find(serial);
        if (other == to.end()) event(whole, r.base, r.size, r.stream);
        else if (other->second.size < r.size) event(end, r.base + other->second.size, r.size - other->second.size, r.stream);
        else continue;
        w.end_dict();
      }
    };
    if (expandable_segments) {
      // An expandable segment is pages mapped into a reservation: PyTorch records each run of
      // pages it maps or unmaps, even the first and the last (verify then follows the
      // reservation there), and a run never spans a live block.
      uncovered(regions, after, [&](std::uintptr_t base, std::size_t size, stream_id stream) {
        event("segment_unmap", base, size, stream);
        w.end_dict();
      });
      uncovered(after, regions, [&](std::uintptr_t base, std::size_t size, stream_id stream) {
        event("segment_map", base, size, stream);
        w.end_dict();
      });
    } else {
      differences(regions, after, "segment_free", "segment_unmap");
      differences(after, regions, "segment_alloc", "segment_map");
    }
    regions = after;
  };

  std::uint64_t done = 0;
  trace::for_each_event(t, [&](trace::event const& e) {
    if (++done <= restored) return;
    if (e.kind == trace::op::alloc) {
      if (live[e.slot]) return;
      allocation const got = a->allocate(e.size, e.alignment, e.stream);
      segment_events();  // the segment an allocation needed comes first, as in PyTorch
      if (!got) {
        std::size_t const reserved = a->counters().reserved_bytes;
        event("oom", 0, e.size, e.stream);
        w.entry("device_free", static_cast<std::int64_t>(capacity > reserved && capacity != std::numeric_limits<std::size_t>::max()
                                                             ? capacity - reserved
                                                             : 0));
        w.end_dict();
        return;
      }
      block[e.slot] = got.block();
      size_of[e.slot] = got.size;
      live[e.slot] = true;
      if (expandable_segments) small_at.emplace(got.address, got.size <= small_block);
      event("alloc", got.address, got.size, e.stream);
      w.entry("requested_size", static_cast<std::int64_t>(e.size));
      w.end_dict();
    } else if (e.kind == trace::op::release) {
      (void)a->release_free_regions();
      segment_events();
    } else if (live[e.slot]) {
      live[e.slot] = false;
      std::uintptr_t const address = block[e.slot].address;
      std::size_t const size = size_of[e.slot];
      event("free_requested", address, size, e.stream);
      w.end_dict();
      a->deallocate(block[e.slot]);
      event("free_completed", address, size, e.stream);
      w.end_dict();
      segment_events();
    }
  });
  w.end_list();
  w.end_list();

  // The state at the end: every region as a segment, its chunks as blocks.
  w.text("segments");
  w.begin_list();
  std::map<std::uint64_t, std::vector<chunk_view>> chunks;
  a->visit_chunks([&](chunk_view const& v) { chunks[v.region_serial].push_back(v); });
  for (auto& [serial, list] : chunks) {
    std::sort(list.begin(), list.end(), [](chunk_view const& x, chunk_view const& y) { return x.address < y.address; });
    region_view const& r = regions.at(serial);
    std::size_t allocated = 0, requested_total = 0;
    for (chunk_view const& v : list)
      if (v.in_use) {
        allocated += v.size;
        requested_total += v.requested;
      }
    w.begin_dict();
    w.entry("device", t.device);
    w.entry("address", static_cast<std::int64_t>(r.base));
    w.entry("total_size", static_cast<std::int64_t>(r.size));
    w.entry("stream", static_cast<std::int64_t>(r.stream));
    w.entry("segment_type", small_pool(r) ? "small" : "large");
    w.entry("allocated_size", static_cast<std::int64_t>(allocated));
    w.entry("active_size", static_cast<std::int64_t>(allocated));
    w.entry("requested_size", static_cast<std::int64_t>(requested_total));
    w.text("blocks");
    w.begin_list();
    for (chunk_view const& v : list) {
      w.begin_dict();
      w.entry("address", static_cast<std::int64_t>(v.address));
      w.entry("size", static_cast<std::int64_t>(v.size));
      w.entry("requested_size", static_cast<std::int64_t>(v.in_use ? v.requested : 0));
      w.entry("state", v.in_use ? "active_allocated" : "inactive");
      w.text("frames");
      w.begin_list();
      w.end_list();
      w.end_dict();
    }
    w.end_list();
    w.end_dict();
  }
  w.end_list();
  // The settings a reader (verify among them) replays it under.
  w.text("allocator_settings");
  w.begin_dict();
  w.text("expandable_segments");
  w.boolean(expandable_segments);
  if (c.params().has("max_split_size_mb") && c.params().text("max_split_size_mb") != "unlimited")
    w.entry("max_split_size", static_cast<std::int64_t>(c.params().size("max_split_size_mb") << 20));
  w.end_dict();
  w.end_dict();
  w.finish();
}

}  // namespace fraglab
