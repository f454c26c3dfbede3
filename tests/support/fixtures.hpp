// Small constructors for allocators in tests.
#pragma once

#include <fraglab/backends/heap_backend.hpp>
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/growth_rules.hpp>

#include <memory>
#include <vector>

namespace fraglab::testing {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;
constexpr std::size_t GiB() { return 1024 * MiB; }
constexpr std::uintptr_t sim_base = std::uintptr_t{1} << 40;   // simulated_backend's default base
constexpr std::uintptr_t heap_base = std::uintptr_t{1} << 32;  // heap_backend's default base

template <class P, class B = simulated_backend>
using alloc_t = allocator<P, B>;

// One fixed pool of `bytes` on the simulated backend, 256-byte quantum, any remainder splits.
template <class P>
std::unique_ptr<alloc_t<P>> fixed_pool(std::size_t bytes, coalesce_mode mode = coalesce_mode::immediate)
{
  typename alloc_t<P>::config c;
  c.size = {.quantum = 256, .min_size = 256};
  c.growth.kind = growth_kind::fixed;
  c.growth.initial = bytes;
  c.coalesce.mode = mode;
  return std::make_unique<alloc_t<P>>(simulated_backend{}, c);
}

// The chunks as (address, size, in use) triples, for exact layout assertions.
struct layout_entry {
  std::uintptr_t address;
  std::size_t size;
  bool in_use;
  bool operator==(layout_entry const&) const = default;
};

template <class A>
std::vector<layout_entry> layout(A const& a)
{
  std::vector<layout_entry> out;
  a.visit_chunks([&](chunk_view const& v) { out.push_back({v.address, v.size, v.in_use}); });
  return out;
}

}  // namespace fraglab::testing
