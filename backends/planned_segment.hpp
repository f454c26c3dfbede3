// A segment a recording shows an allocator obtaining: where and how large. A backend that
// follows such a plan (simulated_backend::follow) hands out the recorded addresses.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fraglab {

struct planned_segment {
  std::uintptr_t address;
  std::size_t size;
};

}  // namespace fraglab
