#include <fraglab/runtime/run/trace_statistics.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>

#include <algorithm>
#include <map>
#include <numeric>

namespace fraglab {
namespace {

std::string quantile(std::vector<std::size_t>& v, double q)
{
  if (v.empty()) return "0";
  std::size_t const k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return std::to_string(v[k]);
}

}  // namespace


std::vector<std::pair<std::string, std::string>> trace_statistics(trace::trace const& t)
{
  std::vector<std::size_t> sizes, lifetimes;
  std::vector<std::uint64_t> born(t.slots, 0);
  std::vector<std::size_t> size_of(t.slots, 0);
  std::vector<bool> live(t.slots, false);
  std::size_t live_bytes = 0, peak_live = 0, live_count = 0, peak_count = 0, aligned = 0;
  std::map<std::uint64_t, std::size_t> streams;
  std::uint64_t index = 0;
  trace::for_each_event(t, [&](trace::event const& e) {
    ++index;
    if (e.kind == trace::op::release) return;
    if (e.kind == trace::op::alloc) {
      if (live[e.slot]) return;
      live[e.slot] = true;
      born[e.slot] = index;
      size_of[e.slot] = e.size;
      sizes.push_back(e.size);
      // Blocks live at once that no address space holds are bad input, not a wrapped sum.
      if (__builtin_add_overflow(live_bytes, e.size, &live_bytes))
        throw input_error(t.name + ": event " + std::to_string(index) + ": the blocks live at once pass 2^64 bytes with this allocation of " +
                          std::to_string(e.size));
      peak_live = std::max(peak_live, live_bytes);
      peak_count = std::max(peak_count, ++live_count);
      aligned += e.alignment > 16 ? 1 : 0;
      ++streams[e.stream];
    } else if (live[e.slot]) {
      live[e.slot] = false;
      live_bytes -= size_of[e.slot];
      --live_count;
      lifetimes.push_back(index - born[e.slot]);
    }
  });
  // The mean of sizes whose sum may pass 2^64 (many large allocations over a long trace).
  __extension__ using u128 = unsigned __int128;
  u128 const total = std::accumulate(sizes.begin(), sizes.end(), u128{0});
  auto const n = [](auto v) { return std::to_string(v); };
  std::vector<std::pair<std::string, std::string>> out{
      {"trace", t.name},
      {"format", t.source_format.empty() ? std::string("native text") : t.source_format},
      {"events", n(t.event_count())},
      {"allocs", n(t.allocs)},
      {"frees", n(t.frees)},
      {"releases", n(t.releases)},
      {"recorded_failures", n(t.recorded_failures)},
      {"peak_live_bytes", n(peak_live)},
      {"peak_live_blocks", n(peak_count)},
      {"live_at_end_bytes", n(live_bytes)},
      {"never_freed", n(live_count)},
      {"streams", n(streams.size())},
      {"aligned_above_16", n(aligned)},
      {"size_mean", n(sizes.empty() ? std::uint64_t{0} : static_cast<std::uint64_t>(total / sizes.size()))},
      {"size_min", quantile(sizes, 0.0)},
      {"size_median", quantile(sizes, 0.5)},
      {"size_p99", quantile(sizes, 0.99)},
      {"size_max", quantile(sizes, 1.0)},
      {"lifetime_median_events", quantile(lifetimes, 0.5)},
      {"lifetime_p99_events", quantile(lifetimes, 0.99)},
      {"lifetime_max_events", quantile(lifetimes, 1.0)},
  };
  std::string notes;
  for (auto const& n : t.notes) notes += (notes.empty() ? "" : "; ") + n;
  out.emplace_back("notes", notes);
  return out;
}

}  // namespace fraglab
