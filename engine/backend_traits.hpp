// Every optional member of a backend, resolved in one place as the parts' hooks are
// (engine/part_traits.hpp): the engine, the adaptors (any_backend, observed_backend) and the
// replay ask these traits, never the backend itself, so each member has one spelling and one
// signature (docs/concepts.md, "Backend").
//
// A backend that offers optional members declares them:
//
//   class my_backend {
//    public:
//     static constexpr fraglab::backend_hook hooks =
//         fraglab::backend_hook::reserve | fraglab::backend_hook::acquire_at;
//     ...
//   };
//
// and the declaration and what the traits find must agree: a member declared but misspelt or
// given other parameters, or defined but not declared, is a compile error naming it, not a
// member the engine silently never calls.
#pragma once

#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/hook_set.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

namespace fraglab {

enum class backend_hook : std::uint32_t {
  none = 0,
  next_address = 1u << 0,     // cb.next_address() -> std::uintptr_t: where the next acquisition starts (0: unknown)
  acquire_mapping = 1u << 1,  // b.acquire_mapping(n) -> acquisition: memory apart from the growing space (mmap beside sbrk)
  reserve = 1u << 2,          // b.reserve(n, alignment) -> acquisition: address space reserved, nothing mapped
  acquire_at = 1u << 3,       // b.acquire_at(address, n) -> acquisition: memory mapped inside a reservation
  map_alias = 1u << 4,        // b.map_alias(at, pages) -> bool: pages mapped again at `at` (GMLake's stitching)
  unmap_alias = 1u << 5,      // b.unmap_alias(at, n): such a mapping taken away
  follow = 1u << 6,           // b.follow(span<planned_segment const>): a recording's addresses handed out
};

template <>
inline constexpr bool detail::is_hook_set<backend_hook> = true;

template <class B>
struct backend_traits {
  static constexpr bool next_address = requires(B const cb) { { cb.next_address() } -> std::convertible_to<std::uintptr_t>; };
  static constexpr bool acquire_mapping = requires(B b, std::size_t n) { { b.acquire_mapping(n) } -> std::same_as<acquisition>; };
  static constexpr bool reserve = requires(B b, std::size_t n) { { b.reserve(n, n) } -> std::same_as<acquisition>; };
  static constexpr bool acquire_at =
      requires(B b, std::uintptr_t at, std::size_t n) { { b.acquire_at(at, n) } -> std::same_as<acquisition>; };
  static constexpr bool map_alias = requires(B b, std::uintptr_t at, std::span<std::uintptr_t const> pages) {
    { b.map_alias(at, pages) } -> std::convertible_to<bool>;
  };
  static constexpr bool unmap_alias = requires(B b, std::uintptr_t at, std::size_t n) { b.unmap_alias(at, n); };
  static constexpr bool follow = requires(B b, std::span<planned_segment const> plan) { b.follow(plan); };

  static constexpr backend_hook declared = detail::declared_hook_set<backend_hook, B>();
  static_assert(has(declared, backend_hook::next_address) == next_address,
                "backend: next_address() const -> std::uintptr_t must be declared in `hooks` exactly when it is defined");
  static_assert(has(declared, backend_hook::acquire_mapping) == acquire_mapping,
                "backend: acquire_mapping(n) -> acquisition must be declared in `hooks` exactly when it is defined");
  static_assert(has(declared, backend_hook::reserve) == reserve,
                "backend: reserve(n, alignment) -> acquisition must be declared in `hooks` exactly when it is defined");
  static_assert(has(declared, backend_hook::acquire_at) == acquire_at,
                "backend: acquire_at(address, n) -> acquisition must be declared in `hooks` exactly when it is defined");
  static_assert(has(declared, backend_hook::map_alias) == map_alias,
                "backend: map_alias(at, span<uintptr_t const> pages) -> bool must be declared in `hooks` exactly when it is "
                "defined");
  static_assert(has(declared, backend_hook::unmap_alias) == unmap_alias,
                "backend: unmap_alias(at, n) must be declared in `hooks` exactly when it is defined");
  static_assert(has(declared, backend_hook::follow) == follow,
                "backend: follow(span<planned_segment const>) must be declared in `hooks` exactly when it is defined");
};

}  // namespace fraglab
