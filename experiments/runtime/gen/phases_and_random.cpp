#include <fraglab/runtime/gen/phases_and_random.hpp>

#include <fraglab/runtime/gen/detail/trace_builder.hpp>

#include <algorithm>
#include <queue>
#include <vector>

namespace fraglab::gen {
using detail::shuffle;
using detail::trace_builder;

trace::trace generate_phases(phases_params const& p, trace::trace_writer* out)
{
  rng r(p.seed);
  trace_builder b("phases-seed" + std::to_string(p.seed), out);
  std::vector<std::uint32_t> long_lived;
  for (std::size_t phase = 0; phase < p.phases; ++phase) {
    std::vector<std::size_t> sizes(r.uniform(3, 8));
    for (auto& s : sizes) s = r.chance(12) ? r.log_uniform(13, 17) : (r.log_uniform(4, 11) + 7) / 8 * 8;
    auto draw = [&] {
      if (r.chance(15)) return static_cast<std::size_t>(r.log_uniform(4, 12));  // strings and odd buffers
      std::size_t const i = std::min(r.uniform(0, sizes.size() - 1), r.uniform(0, sizes.size() - 1));
      return sizes[i];  // skewed toward the first few sizes
    };
    std::size_t const n = p.objects_per_phase * r.uniform(50, 150) / 100;
    std::vector<std::uint32_t> temp;
    switch (r.uniform(0, 2)) {
      case 0:  // ramp: everything outlives the phase; some older objects die at its end
        for (std::size_t i = 0; i < n; ++i) long_lived.push_back(b.alloc(draw()));
        shuffle(long_lived, r);
        for (std::size_t i = long_lived.size() * 3 / 10; i > 0; --i) {
          b.free(long_lived.back());
          long_lived.pop_back();
        }
        break;
      case 1:  // peak: a burst, then all of it goes, in allocation or reverse order or shuffled
        for (std::size_t i = 0; i < n; ++i) temp.push_back(b.alloc(draw()));
        if (auto const order = r.uniform(0, 2); order == 1) std::reverse(temp.begin(), temp.end());
        else if (order == 2) shuffle(temp, r);
        b.free_all(temp);
        break;
      default: {  // plateau: a steady population turning over
        std::size_t const population = std::max<std::size_t>(1, n / 4);
        for (std::size_t i = 0; i < population; ++i) temp.push_back(b.alloc(draw()));
        for (std::size_t i = 0; i < n; ++i) {
          std::size_t const victim = r.uniform(0, temp.size() - 1);
          b.free(temp[victim]);
          temp[victim] = b.alloc(draw());
        }
        shuffle(temp, r);
        b.free_all(temp);
        if (r.chance(30)) long_lived.push_back(b.alloc(draw()));
      }
    }
  }
  shuffle(long_lived, r);
  b.free_all(long_lived);
  return b.take();
}

trace::trace generate_random(random_params const& p, trace::trace_writer* out)
{
  rng r(p.seed);
  trace_builder b("random-seed" + std::to_string(p.seed), out);
  using death = std::pair<std::uint64_t, std::uint32_t>;  // (time of death, id)
  std::priority_queue<death, std::vector<death>, std::greater<>> dying;
  for (std::uint64_t now = 0; now < p.allocations; ++now) {
    while (!dying.empty() && dying.top().first <= now) {
      b.free(dying.top().second);
      dying.pop();
    }
    std::uint32_t const id = b.alloc(r.log_uniform(p.min_size_log2, p.max_size_log2));
    dying.emplace(now + r.uniform(1, 2 * p.mean_lifetime), id);
  }
  while (!dying.empty()) {
    b.free(dying.top().second);
    dying.pop();
  }
  return b.take();
}

}  // namespace fraglab::gen
