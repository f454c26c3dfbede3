// Time compressed to sections: the steps between consecutive distinct lifetime ends, in each
// of which the same buffers are live. A buffer spans sections [first, last).
#pragma once

#include <fraglab/policies/offline/problem.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fraglab::offline::detail {

struct sections {
  std::size_t count = 0;
  std::vector<std::uint32_t> first, last;  // per buffer; first == last for a buffer that occupies nothing

  explicit sections(problem const& p)
  {
    std::vector<std::uint64_t> times;
    times.reserve(2 * p.buffers.size());
    for (buffer const& b : p.buffers)
      if (occupies_space(b)) {
        times.push_back(b.lower);
        times.push_back(b.upper);
      }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    count = times.empty() ? 0 : times.size() - 1;
    first.resize(p.buffers.size());
    last.resize(p.buffers.size());
    auto const index = [&](std::uint64_t t) {
      return static_cast<std::uint32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
    };
    for (std::size_t i = 0; i < p.buffers.size(); ++i) {
      if (!occupies_space(p.buffers[i])) continue;
      first[i] = index(p.buffers[i].lower);
      last[i] = index(p.buffers[i].upper);
    }
  }
};

}  // namespace fraglab::offline::detail
