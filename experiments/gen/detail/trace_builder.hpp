// Builds a generated trace event by event. Ids are recycled as programs recycle addresses,
// so a generated trace needs as many slots as it has blocks live at once.
#pragma once

#include "experiments/gen/rng.hpp"
#include "experiments/trace/trace.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fraglab::gen::detail {

class trace_builder {
 public:
  explicit trace_builder(std::string name) { t_.name = std::move(name); }

  std::uint32_t alloc(std::size_t size, std::size_t alignment = 1)
  {
    std::uint32_t id;
    if (!recycled_.empty()) {
      id = recycled_.back();
      recycled_.pop_back();
    } else {
      id = static_cast<std::uint32_t>(t_.slots++);
    }
    t_.events.push_back({trace::op::alloc, id, size, alignment});
    ++t_.allocs;
    return id;
  }

  void free(std::uint32_t id)
  {
    t_.events.push_back({trace::op::free, id});
    ++t_.frees;
    recycled_.push_back(id);
  }

  void free_all(std::vector<std::uint32_t>& ids)
  {
    for (std::uint32_t id : ids) free(id);
    ids.clear();
  }

  trace::trace take() { return std::move(t_); }

 private:
  trace::trace t_;
  std::vector<std::uint32_t> recycled_;
};

template <class T>
void shuffle(std::vector<T>& v, rng& r)
{
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[r.uniform(0, i - 1)]);
}

}  // namespace fraglab::gen::detail
