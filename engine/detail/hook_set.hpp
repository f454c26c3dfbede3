// A set of optional members that a part or a backend declares (`static constexpr X hooks`):
// the bit operations on it and the reading of the declaration, one definition for
// engine/part_traits.hpp's part_hook and engine/backend_traits.hpp's backend_hook.
#pragma once

#include <concepts>
#include <type_traits>

namespace fraglab {
namespace detail {

// True for the enums that are sets of hooks (each specialises it beside its definition).
template <class E>
inline constexpr bool is_hook_set = false;

// What `T::hooks` declares; E::none where it declares nothing.
template <class E, class T>
constexpr E declared_hook_set() noexcept
{
  if constexpr (requires { { T::hooks } -> std::convertible_to<E>; }) return T::hooks;
  else return E::none;
}

}  // namespace detail

template <class E>
  requires detail::is_hook_set<E>
constexpr E operator|(E a, E b) noexcept
{
  using bits = std::underlying_type_t<E>;
  return static_cast<E>(static_cast<bits>(a) | static_cast<bits>(b));
}

template <class E>
  requires detail::is_hook_set<E>
constexpr bool has(E set, E h) noexcept
{
  using bits = std::underlying_type_t<E>;
  return (static_cast<bits>(set) & static_cast<bits>(h)) != 0;
}

}  // namespace fraglab
