// Every optional member of a policy part, resolved in one place, in the manner of
// foonathan/memory's allocator_traits: the engine asks these traits whether a part has a
// hook, and never probes the part itself, so each hook has one spelling and one signature
// (docs/concepts.md says what each means).
//
// A part that offers optional hooks declares them:
//
//   struct my_reclaim {
//     static constexpr fraglab::part_hook hooks = fraglab::part_hook::before_growth |
//                                                 fraglab::part_hook::clock;
//     ...
//   };
//
// and for every hook the declaration and what the traits find (with the engine's own
// argument types) must agree. A hook declared but misspelt, or given other parameters, is a
// compile error naming it, not a hook the engine silently never calls; so is a hook defined
// but not declared.
#pragma once

#include <fraglab/engine/detail/hook_set.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace fraglab {

enum class part_hook : std::uint32_t {
  none = 0,
  // reclaim rule
  on_search = 1u << 0,            // r.on_search(key): every allocation, before the search
  after_free = 1u << 1,           // r.after_free(view, size, ends_region, region_base)
  clock = 1u << 2,                // r.clock() -> std::uint64_t: stamped on a region gone idle
  before_growth = 1u << 3,        // r.before_growth(view, key, need)
  after_failed_growth = 1u << 4,  // r.after_failed_growth(view, key, need) -> bool
  // pool rule
  reservation = 1u << 5,       // p.reservation(key) -> optional {size, page}: an expandable pool
  mapping_size = 1u << 6,      // p.mapping_size(need, pool_holds_memory) -> bytes of a mapping of its own, or 0
  size_class_pools = 1u << 7,  // p.size_class_pools: bool, a pool per size class
  // size rule
  power_of_two_classes = 1u << 8,  // s.power_of_two_classes: bool
  // free index
  split_override = 1u << 9,  // ix.split_override(c, n) -> std::optional<bool>
};

template <>
inline constexpr bool detail::is_hook_set<part_hook> = true;

// What `Part::hooks` declares; none where it declares nothing.
template <class Part>
constexpr part_hook declared_hooks() noexcept
{
  return detail::declared_hook_set<part_hook, Part>();
}

// Whether a part declares only hooks of its own kind: the engine would never call another's.
template <class Part>
constexpr bool declares_only(part_hook allowed) noexcept
{
  return (static_cast<std::uint32_t>(declared_hooks<Part>()) & ~static_cast<std::uint32_t>(allowed)) == 0;
}

// A reclaim rule R, as the engine calls it: View is the engine's view of its idle regions,
// Key the pool rule's key.
template <class R, class View, class Key>
struct reclaim_traits {
  static constexpr bool on_search = requires(R r, Key const& k) { r.on_search(k); };
  static constexpr bool after_free =
      requires(R r, View& v, std::size_t n, bool ends, std::uintptr_t base) { r.after_free(v, n, ends, base); };
  static constexpr bool clock = requires(R r) { { r.clock() } -> std::convertible_to<std::uint64_t>; };
  static constexpr bool before_growth = requires(R r, View& v, Key const& k, std::size_t n) { r.before_growth(v, k, n); };
  static constexpr bool after_failed_growth =
      requires(R r, View& v, Key const& k, std::size_t n) { { r.after_failed_growth(v, k, n) } -> std::convertible_to<bool>; };

  static constexpr part_hook declared = declared_hooks<R>();
  static_assert(declares_only<R>(part_hook::on_search | part_hook::after_free | part_hook::clock | part_hook::before_growth |
                                 part_hook::after_failed_growth),
                "a reclaim rule declares a hook of another kind of part");
  static_assert(has(declared, part_hook::on_search) == on_search,
                "reclaim rule: on_search(key) must be declared in `hooks` exactly when it is defined with that signature");
  static_assert(has(declared, part_hook::after_free) == after_free,
                "reclaim rule: after_free(view, size, ends_region, region_base) must be declared in `hooks` exactly when "
                "it is defined with that signature");
  static_assert(has(declared, part_hook::clock) == clock,
                "reclaim rule: clock() -> std::uint64_t must be declared in `hooks` exactly when it is defined");
  static_assert(has(declared, part_hook::before_growth) == before_growth,
                "reclaim rule: before_growth(view, key, need) must be declared in `hooks` exactly when it is defined with "
                "that signature");
  static_assert(has(declared, part_hook::after_failed_growth) == after_failed_growth,
                "reclaim rule: after_failed_growth(view, key, need) -> bool must be declared in `hooks` exactly when it is "
                "defined with that signature");
};

// A pool rule P whose pool_key gives Key.
template <class P, class Key>
struct pool_traits {
  static constexpr bool reservation = requires(P const p, Key const& k) {
    static_cast<bool>(p.reservation(k));
    { p.reservation(k)->size } -> std::convertible_to<std::size_t>;
    { p.reservation(k)->page } -> std::convertible_to<std::size_t>;
  };
  static constexpr bool mapping_size =
      requires(P const p, std::size_t n) { { p.mapping_size(n, true) } -> std::convertible_to<std::size_t>; };
  static constexpr bool size_class_pools = requires(P const p) { { p.size_class_pools } -> std::convertible_to<bool>; };

  static constexpr part_hook declared = declared_hooks<P>();
  static_assert(declares_only<P>(part_hook::reservation | part_hook::mapping_size | part_hook::size_class_pools),
                "a pool rule declares a hook of another kind of part");
  static_assert(has(declared, part_hook::reservation) == reservation,
                "pool rule: reservation(key) -> optional {size, page} must be declared in `hooks` exactly when it is "
                "defined with that signature");
  static_assert(has(declared, part_hook::mapping_size) == mapping_size,
                "pool rule: mapping_size(need, pool_holds_memory) -> std::size_t must be declared in `hooks` exactly when "
                "it is defined with that signature");
  static_assert(has(declared, part_hook::size_class_pools) == size_class_pools,
                "pool rule: the size_class_pools flag must be declared in `hooks` exactly when the rule has it");
};

// A size rule S.
template <class S>
struct size_traits {
  static constexpr bool power_of_two_classes = requires(S const s) { { s.power_of_two_classes } -> std::convertible_to<bool>; };

  static constexpr part_hook declared = declared_hooks<S>();
  static_assert(declares_only<S>(part_hook::power_of_two_classes), "a size rule declares a hook of another kind of part");
  static_assert(has(declared, part_hook::power_of_two_classes) == power_of_two_classes,
                "size rule: the power_of_two_classes flag must be declared in `hooks` exactly when the rule has it");
};

// A free index Ix over chunks C.
template <class Ix, class C>
struct index_traits {
  static constexpr bool split_override =
      requires(Ix const ix, C const& c, std::size_t n) { { ix.split_override(c, n) } -> std::same_as<std::optional<bool>>; };

  static constexpr part_hook declared = declared_hooks<Ix>();
  static_assert(declares_only<Ix>(part_hook::split_override), "a free index declares a hook of another kind of part");
  static_assert(has(declared, part_hook::split_override) == split_override,
                "free index: split_override(chunk, n) -> std::optional<bool> must be declared in `hooks` exactly when it "
                "is defined with that signature");
};

}  // namespace fraglab
