#include <fraglab/runtime/run/explain.hpp>

#include <fraglab/runtime/inspect/drive.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/output/table_view.hpp>
#include <fraglab/runtime/registry/composition.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>
#include <fraglab/runtime/run/tune.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace fraglab {
namespace {

constexpr std::size_t small_request = std::size_t{1} << 20;  // PyTorch's small pool: rounded requests up to 1 MiB

// A segment (region) as the replay holds it at the moment explained.
struct segment_state {
  std::uintptr_t address = ~std::uintptr_t{0};
  std::size_t size = 0;
  std::uint32_t pool = 0;
  stream_id stream = 0;
  std::size_t live_bytes = 0;  // requested by its live blocks
  std::vector<chunk_view> live, free;
};

// A pool's kind by what it serves: rounded requests up to 1 MiB are the small pool's.
struct pool_kind {
  bool known = false;
  bool small = false;
};

std::string pool_name(pool_kind k) { return !k.known ? "(no live block)" : k.small ? "small" : "large"; }

// The state after `events` events under the recorded preset: segments, and each live block's site.
struct state_at {
  allocator_stats counters;
  std::map<std::uint64_t, segment_state> segments;  // by region serial
  std::unordered_map<std::uint32_t, pool_kind> kinds;  // by pool
  std::unordered_map<std::uintptr_t, std::string> site_of;  // live block address -> its call site
};

state_at read_state(composition const& c, trace::trace const& t, std::uint64_t events)
{
  auto a = c.make();
  std::vector<block_ref> blocks;
  (void)drive(*a, t, events, blocks);
  state_at s;
  s.counters = a->counters();
  if (!t.sites.empty()) {
    std::vector<std::uint32_t> site_of_slot(t.slots, 0);
    std::uint64_t i = 0;
    trace::for_each_event(t, [&](trace::event const& e) {
      if (i < events && e.kind == trace::op::alloc) site_of_slot[e.slot] = t.event_sites[i];
      ++i;
    });
    for (std::size_t slot = 0; slot < blocks.size(); ++slot)
      if (blocks[slot].address != 0 && site_of_slot[slot] != 0) s.site_of[blocks[slot].address] = t.sites[site_of_slot[slot]];
  }
  a->visit_chunks([&](chunk_view const& v) {
    segment_state& g = s.segments[v.region_serial];
    g.address = std::min(g.address, v.address);
    g.size += v.size;
    g.pool = v.pool;
    g.stream = v.stream;
    if (v.in_use) {
      g.live.push_back(v);
      g.live_bytes += v.requested;
      s.kinds[v.pool] = {true, v.requested <= small_request};
    } else {
      g.free.push_back(v);
    }
  });
  return s;
}

// The live blocks of a segment, largest first, with their call sites: what keeps its free
// bytes from being given back.
std::string live_blocks_text(segment_state const& g, state_at const& s)
{
  std::vector<chunk_view> live = g.live;
  std::sort(live.begin(), live.end(), [](chunk_view const& a, chunk_view const& b) { return a.size > b.size; });
  std::string out;
  for (std::size_t i = 0; i < live.size() && i < 3; ++i) {
    auto const site = s.site_of.find(live[i].address);
    out += (i == 0 ? "" : "; ") + human_size(live[i].size) + " at " + address_text(live[i].address) +
           (site == s.site_of.end() ? "" : " from " + site->second);
  }
  if (live.size() > 3) out += "; and " + std::to_string(live.size() - 3) + " more";
  return out;
}

struct what_if_numbers {
  bool served = false;
  std::uint64_t failed = 0;
  std::size_t peak_reserved = 0;
};

}  // namespace

explanation explain(trace::trace const& t, explain_options const& o)
{
  if (t.source_format != trace::to_string(trace::trace_format::pytorch_snapshot))
    throw std::invalid_argument(t.name + ": " + (t.source_format.empty() ? "a trace" : t.source_format) +
                                ", not a PyTorch memory snapshot: explain replays the allocator that recorded it");
  if (!t.recorded_unmodelled.empty())
    throw std::invalid_argument(t.name + ": recorded with allocator settings the PyTorch presets do not model (" +
                                listed(t.recorded_unmodelled) + "): no replay can reproduce its state");
  bool const oom = !t.failures.empty();
  if (oom && o.failure >= t.failures.size())
    throw std::invalid_argument("--oom: " + std::to_string(o.failure + 1) + ", but " + t.name + " recorded " +
                                std::to_string(t.failures.size()) + " out-of-memory error" + (t.failures.size() == 1 ? "" : "s"));
  if (!oom && o.failure != 0) throw std::invalid_argument("--oom: " + t.name + " recorded no out-of-memory error");

  std::string const preset = t.recorded_expandable ? "pytorch_expandable" : "pytorch_caching";
  std::size_t const unlimited = std::numeric_limits<std::size_t>::max();
  auto const recorded = make_composition(preset, cell_parameters(preset, {}, t, true), backend_choice{"simulated", unlimited});
  trace::recorded_failure const failure = oom ? t.failures[o.failure] : trace::recorded_failure{};
  std::uint64_t const events = oom ? failure.before_event : events_to_peak_reserved(*recorded, t);
  state_at const s = read_state(*recorded, t, events);

  explanation out;
  out.out_of_memory = oom;
  out.preset = preset;
  out.events = events;
  std::ostringstream text;
  std::size_t const reserved = s.counters.reserved_bytes;
  std::size_t const memory = oom ? reserved + static_cast<std::size_t>(failure.device_free) : reserved;
  bool const small = oom && failure.size <= small_request;

  // Free bytes: stranded beside live blocks, or in segments with none (PyTorch gives those
  // back before it reports an OOM, and they are what the peak could have done without).
  std::size_t stranded = 0, idle = 0;
  struct pool_free {
    std::size_t bytes = 0, largest = 0;
  };
  std::map<std::pair<std::uint32_t, stream_id>, pool_free> free_of_pool;
  for (auto const& [serial, g] : s.segments)
    for (chunk_view const& f : g.free) {
      (g.live.empty() ? idle : stranded) += f.size;
      pool_free& p = free_of_pool[{g.pool, g.stream}];
      p.bytes += f.size;
      p.largest = std::max(p.largest, f.size);
    }
  auto const requested_pool = [&](segment_state const& g) {
    auto const k = s.kinds.find(g.pool);
    return oom && g.stream == failure.stream && k != s.kinds.end() && k->second.small == small;
  };

  std::string const where = oom ? "out of memory at device_traces[" + std::to_string(t.device) + "][" + std::to_string(failure.entry) + "]"
                                : "the first peak of reserved memory";
  text << t.name << ": " << where << " (after " << events << " of " << t.event_count() << " events), replayed under " << preset
       << (t.recorded_settings.empty() ? "" : " with its recorded settings") << '\n';
  if (oom) {
    text << "  the request    " << human_size(failure.size) << " on stream " << failure.stream << ", for the " << (small ? "small" : "large")
         << " pool\n"
         << "  the memory     " << human_size(memory) << ": " << human_size(reserved) << " reserved by the allocator + "
         << human_size(failure.device_free) << " the device still had free\n";
  } else {
    text << "  reserved       " << human_size(reserved) << '\n';
  }
  text << "  in use         " << human_size(s.counters.live_bytes) << " requested by " << s.counters.live_chunks << (s.counters.live_chunks == 1 ? " live block (" : " live blocks (")
       << human_size(s.counters.allocated_bytes) << " as blocks)\n"
       << "  free, cached   " << human_size(stranded) << " in segments that hold live blocks (stranded); " << human_size(idle)
       << " in segments that hold none" << (oom ? " (given back before PyTorch gave up)" : "") << '\n';
  for (auto const& [key, p] : free_of_pool) {
    auto const k = s.kinds.find(key.first);
    if (k == s.kinds.end()) continue;
    text << "  " << pool_name(k->second) << " pool, stream " << key.second << ": " << human_size(p.bytes) << " free, the largest block "
         << human_size(p.largest) << '\n';
  }

  // The stranded free blocks, the request's pool first, then by size.
  std::vector<std::pair<segment_state const*, chunk_view>> blocks;
  for (auto const& [serial, g] : s.segments)
    if (!g.live.empty())
      for (chunk_view const& f : g.free) blocks.emplace_back(&g, f);
  std::stable_sort(blocks.begin(), blocks.end(), [&](auto const& a, auto const& b) {
    return std::pair(!requested_pool(*a.first), b.second.size) < std::pair(!requested_pool(*b.first), a.second.size);
  });
  out.stranded.columns = {"pool", "stream", "segment", "segment_bytes", "free_block", "free_bytes", "live_blocks_in_segment",
                          "live_bytes_in_segment", "largest_live_blocks"};
  for (auto const& [g, f] : blocks) {
    auto const k = s.kinds.find(g->pool);
    out.stranded.rows.push_back({pool_name(k == s.kinds.end() ? pool_kind{} : k->second), std::to_string(g->stream), address_text(g->address),
                                 std::to_string(g->size), address_text(f.address), std::to_string(f.size), std::to_string(g->live.size()),
                                 std::to_string(g->live_bytes), live_blocks_text(*g, s)});
  }

  // What if: each setting tune tries, replayed up to the request and then the request, within
  // the memory there was (an OOM); or over the whole recording without a limit (the peak).
  std::vector<tune_setting> const grid = tune_grid(oom);
  std::vector<std::string> specs{preset + (oom ? ":per_process_memory_fraction=1" : "")};
  for (auto const& g : grid) specs.push_back(g.spec);
  trace::trace to_request;
  if (oom) {
    to_request = t;
    to_request.events.resize(static_cast<std::size_t>(events));
    if (!to_request.event_sites.empty()) to_request.event_sites.resize(static_cast<std::size_t>(events));
    to_request.events.push_back({trace::op::alloc, static_cast<std::uint32_t>(to_request.slots), static_cast<std::size_t>(failure.size), 1,
                                 failure.stream});
    if (!to_request.event_sites.empty()) to_request.event_sites.push_back(0);
    ++to_request.slots;
    to_request.allocs = to_request.frees = to_request.releases = 0;
    for (auto const& e : to_request.events)
      ++(e.kind == trace::op::alloc ? to_request.allocs : e.kind == trace::op::free ? to_request.frees : to_request.releases);
  }
  trace::trace const& replayed = oom ? to_request : t;
  replay_options options;
  options.repeats = 0;
  auto const numbers = run_cells<what_if_numbers>(specs.size(), std::max(1u, o.jobs), [&](std::size_t i) {
    param_set const p = cell_parameters(specs[i], {}, replayed, i == 0);  // the recorded settings for the recorded row only
    replay_result const r = make_composition(specs[i], p, backend_choice{"simulated", oom ? memory : unlimited})->replay(replayed, options);
    return what_if_numbers{r.failed_allocs == 0, r.failed_allocs, r.peak_reserved_bytes};
  });
  std::vector<std::size_t> order(grid.size());
  std::iota(order.begin(), order.end(), std::size_t{1});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    auto const key = [&](std::size_t i) { return std::tuple(!numbers[i].served, grid[i - 1].changed, numbers[i].peak_reserved); };
    return oom ? key(a) < key(b) : std::pair(numbers[a].peak_reserved, grid[a - 1].changed) < std::pair(numbers[b].peak_reserved, grid[b - 1].changed);
  });
  std::size_t const served = static_cast<std::size_t>(std::count_if(order.begin(), order.end(), [&](std::size_t i) { return numbers[i].served; }));
  std::size_t const best = order.front();
  out.recommended = oom && !numbers[best].served ? "" : grid[best - 1].conf;
  out.what_if.columns = {"setting", "policy", oom ? "serves_the_request" : "peak_reserved_vs_recorded", "failed_allocs", "peak_reserved_bytes"};
  auto row = [&](std::size_t i, std::string const& setting) {
    what_if_numbers const& n = numbers[i];
    std::string const judged = oom ? (n.served ? "yes" : "no")
                                   : numbers[0].peak_reserved == 0 ? ""
                                                                   : fixed(static_cast<double>(n.peak_reserved) / static_cast<double>(numbers[0].peak_reserved) - 1.0, 4);
    out.what_if.rows.push_back({setting, specs[i], judged, std::to_string(n.failed), std::to_string(n.peak_reserved)});
  };
  row(0, t.recorded_settings.empty() ? "recorded (defaults)" : "recorded");
  for (std::size_t i : order) row(i, grid[i - 1].conf.empty() ? "(defaults)" : grid[i - 1].conf);

  std::string const check_device = t.name.rfind("@cuda:") == std::string::npos ? "" : " --device " + std::to_string(t.device);
  if (oom) {
    // The verdict. Where the allocator as recorded serves the request within that memory, the
    // allocator is not what failed, whatever its free blocks.
    std::size_t const demand = s.counters.live_bytes + static_cast<std::size_t>(failure.size);
    out.fragmentation = demand <= memory && !numbers[0].served;
    if (demand > memory)
      text << "verdict: real demand. The live blocks and the request need " << human_size(demand) << ", more than the " << human_size(memory)
           << " there was:\n  no allocator could have served it; the program needs less memory at this point, or more of it.\n";
    else if (numbers[0].served)
      text << "verdict: not the allocator. Replayed as recorded within the " << human_size(memory) << " there was, the request is served:\n"
           << "  the device's free bytes then were not all the allocator's to take (another process, or memory outside it).\n";
    else
      text << "verdict: fragmentation. The live blocks and the request need " << human_size(demand) << " of the " << human_size(memory)
           << " there was,\n  but no free block of the " << (small ? "small" : "large") << " pool holds " << human_size(failure.size)
           << ": " << human_size(stranded) << " are stranded beside live blocks.\n";
    if (served == 0) {
      text << "what if: none of the " << grid.size() << " settings tried serves it within " << human_size(memory) << ".\n";
    } else {
      text << "what if: " << served << " of the " << grid.size() << " settings tried serve it within " << human_size(memory)
           << "; with the fewest changes:\n  PYTORCH_CUDA_ALLOC_CONF=" << out.recommended << '\n';
    }
  } else {
    text << "what if: the lowest peak of reserved memory, " << human_size(numbers[best].peak_reserved) << " (as recorded "
         << human_size(numbers[0].peak_reserved) << "), under\n  PYTORCH_CUDA_ALLOC_CONF="
         << (out.recommended.empty() ? "(unset: the defaults)" : out.recommended) << '\n';
  }
  text << "  tried: expandable_segments False/True x max_split_size_mb unlimited,32,...,1024 x roundup_power2_divisions 0,2,4,8"
       << (oom ? "\n  x garbage_collection_threshold 0,0.6,0.8 (not with expandable segments)" : "") << '\n'
       << "  the state: fraglab dump " << t.name.substr(0, t.name.rfind("@cuda:")) << check_device << " -p " << preset << " --at " << events
       << " --format table\n";
  out.text = text.str();
  return out;
}

}  // namespace fraglab
