#include <fraglab/benchmarks/alloc_patterns.hpp>

#include <fraglab/runtime/gen/rng.hpp>

#include <algorithm>
#include <stdexcept>

namespace fraglab::bench {
namespace {

constexpr std::string_view names[] = {"steady", "lifo", "shuffled"};

class trace_writer {
 public:
  explicit trace_writer(std::string name, std::uint64_t seed) : r_(seed) { t_.name = std::move(name); }

  void allocate(std::uint32_t slot)
  {
    t_.events.push_back({trace::op::alloc, slot, r_.log_uniform(4, 13)});
    ++t_.allocs;
    t_.slots = std::max<std::size_t>(t_.slots, std::size_t{slot} + 1);
  }

  void free(std::uint32_t slot)
  {
    t_.events.push_back({trace::op::free, slot});
    ++t_.frees;
  }

  gen::rng& random() noexcept { return r_; }
  trace::trace take() { return std::move(t_); }

 private:
  trace::trace t_;
  gen::rng r_;
};

std::uint32_t as_slot(std::size_t i)
{
  if (i > UINT32_MAX) throw std::invalid_argument("too many live blocks for a trace's slot ids");
  return static_cast<std::uint32_t>(i);
}

}  // namespace

std::string_view to_string(pattern p) noexcept { return names[static_cast<int>(p)]; }

pattern pattern_from_string(std::string_view name)
{
  for (pattern p : all_patterns())
    if (to_string(p) == name) return p;
  throw std::invalid_argument("unknown pattern '" + std::string(name) + "': expected steady, lifo or shuffled");
}

std::vector<pattern> all_patterns() { return {pattern::steady, pattern::lifo, pattern::shuffled}; }

pattern_trace make_pattern_trace(pattern p, std::size_t live, std::uint64_t min_timed_events, std::uint64_t seed)
{
  if (live == 0) throw std::invalid_argument("a pattern needs at least one live block");
  trace_writer w(std::string(to_string(p)) + "-" + std::to_string(live), seed);
  pattern_trace out;
  if (p == pattern::steady) {
    // Allocating 2N and freeing every other block leaves holes that cannot coalesce.
    for (std::size_t i = 0; i < 2 * live; ++i) w.allocate(as_slot(i));
    for (std::size_t i = 1; i < 2 * live; i += 2) w.free(as_slot(i));
    out.setup_events = 3 * live;
    for (std::uint64_t k = 0; 2 * k < min_timed_events; ++k) {
      auto const victim = as_slot(2 * w.random().uniform(0, live - 1));
      w.free(victim);
      w.allocate(victim);
    }
  } else {
    std::vector<std::uint32_t> order(live);
    std::uint64_t timed = 0;
    do {
      for (std::size_t i = 0; i < live; ++i) {
        w.allocate(as_slot(i));
        order[i] = as_slot(p == pattern::lifo ? live - 1 - i : i);
      }
      if (p == pattern::shuffled)  // Fisher-Yates through the portable generator
        for (std::size_t i = live - 1; i > 0; --i) std::swap(order[i], order[w.random().uniform(0, i)]);
      for (std::uint32_t slot : order) w.free(slot);
      timed += 2 * live;
    } while (timed < min_timed_events);
  }
  out.events = w.take();
  return out;
}

}  // namespace fraglab::bench
