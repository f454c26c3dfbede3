// A backend whose releases a listener hears of: a layer that maps the backend's memory at a
// second address too (GMLake's stitched blocks, policies/presets/gmlake.hpp) must forget
// those mappings when the memory behind them goes back, whichever path of the engine gave
// it back (empty_cache, release-and-retry on a miss, a recorded segment_free).
//
// The listener needs `void released(std::uintptr_t base, std::size_t n)`; it is called
// after the backend accepted the release. Everything else passes through unchanged.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace fraglab {

template <class Backend, class Listener>
class observed_backend {
 public:
  observed_backend(Backend b, Listener* listener) : b_(std::move(b)), listener_(listener) {}

  acquisition acquire(std::size_t n, std::size_t alignment) { return b_.acquire(n, alignment); }
  bool release(std::uintptr_t base, std::size_t n)
  {
    if (!b_.release(base, n)) return false;
    listener_->released(base, n);
    return true;
  }

  [[nodiscard]] std::size_t capacity() const { return b_.capacity(); }
  [[nodiscard]] std::size_t granularity() const { return b_.granularity(); }
  [[nodiscard]] std::size_t acquired_bytes() const { return b_.acquired_bytes(); }
  [[nodiscard]] bool supports_merging() const { return b_.supports_merging(); }
  [[nodiscard]] std::string_view name() const { return b_.name(); }
  [[nodiscard]] backend_stats const& stats() const { return b_.stats(); }

  // The optional members, where the backend has them.
  static constexpr backend_hook hooks = backend_traits<Backend>::declared;

  [[nodiscard]] std::uintptr_t next_address() const
    requires backend_traits<Backend>::next_address
  {
    return b_.next_address();
  }
  acquisition acquire_mapping(std::size_t n)
    requires backend_traits<Backend>::acquire_mapping
  {
    return b_.acquire_mapping(n);
  }
  acquisition reserve(std::size_t n, std::size_t alignment)
    requires backend_traits<Backend>::reserve
  {
    return b_.reserve(n, alignment);
  }
  acquisition acquire_at(std::uintptr_t address, std::size_t n)
    requires backend_traits<Backend>::acquire_at
  {
    return b_.acquire_at(address, n);
  }
  bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages)
    requires backend_traits<Backend>::map_alias
  {
    return b_.map_alias(at, pages);
  }
  void unmap_alias(std::uintptr_t at, std::size_t n)
    requires backend_traits<Backend>::unmap_alias
  {
    b_.unmap_alias(at, n);
  }
  void follow(std::span<planned_segment const> plan)
    requires backend_traits<Backend>::follow
  {
    b_.follow(plan);
  }

  [[nodiscard]] Backend& inner() noexcept { return b_; }
  [[nodiscard]] Backend const& inner() const noexcept { return b_; }

 private:
  Backend b_;
  Listener* listener_;
};

}  // namespace fraglab
