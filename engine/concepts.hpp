// The parts the engine composes, checked as C++20 concepts: their required expressions,
// which docs/concepts.md writes down as one table per part (in the manner of
// foonathan/memory). The allocator asserts them for every composition; the parts' optional
// hooks are resolved, and their declarations checked, in engine/part_traits.hpp.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace fraglab {

struct acquisition {
  std::uintptr_t base = 0;
  std::size_t size = 0;
  [[nodiscard]] explicit operator bool() const noexcept { return size != 0; }
  [[nodiscard]] std::uintptr_t end() const noexcept { return base + size; }
};

// A segment a recording shows an allocator obtaining: where and how large. A backend that
// follows such a plan (simulated_backend::follow) hands out the recorded addresses.
struct planned_segment {
  std::uintptr_t address;
  std::size_t size;
};

template <class B>
concept backend = requires(B b, B const cb, std::size_t n, std::uintptr_t a) {
  { b.acquire(n, n) } -> std::same_as<acquisition>;
  { b.release(a, n) } -> std::convertible_to<bool>;
  { cb.capacity() } -> std::convertible_to<std::size_t>;
  { cb.granularity() } -> std::convertible_to<std::size_t>;
  { cb.acquired_bytes() } -> std::convertible_to<std::size_t>;
  { cb.supports_merging() } -> std::convertible_to<bool>;
  { cb.name() } -> std::convertible_to<std::string_view>;
};

template <class Ix, class C>
concept free_index = requires(Ix ix, Ix const cix, C& c) {
  ix.insert(c);
  ix.erase(c);
  { cix.size() } -> std::convertible_to<std::size_t>;
  { ix.largest() } -> std::same_as<C*>;
  { cix.contains(c) } -> std::convertible_to<bool>;
  { cix.check() } -> std::convertible_to<std::string>;
  { cix.steps() } -> std::convertible_to<std::uint64_t>;
  cix.for_each([](C const&) {});
};

template <class Ix, class C>
concept in_place_index = free_index<Ix, C> && requires(Ix ix, C& c, std::size_t n) {
  ix.resized(c, n);
};

template <class Ix, class C>
concept keyed_in_place_index = free_index<Ix, C> && requires(Ix ix, C& c, std::size_t n) {
  ix.exchange(c, n, c);
};

template <class R>
concept split_rule = requires(R const r, std::size_t n) {
  { r.should_split(n, n) } -> std::convertible_to<bool>;
};

template <class P>
concept pool_rule = requires(P const p, std::uint64_t stream, std::size_t n) {
  requires std::equality_comparable<decltype(p.pool_key(stream, n))>;
  requires std::copyable<decltype(p.pool_key(stream, n))>;
};

template <class P>
using pool_key_t = std::remove_cvref_t<decltype(std::declval<P const&>().pool_key(std::uint64_t{}, std::size_t{}))>;

// Ctx is the engine's growth_context, whose decision carries the bytes to ask for.
template <class R, class Ctx>
concept growth_rule_for = requires(R r, R const cr, Ctx const& ctx, std::size_t n) {
  cr.validate();
  { r.acquisition(ctx).bytes } -> std::convertible_to<std::size_t>;
  r.on_acquired(n);
  { r.on_refused(ctx, n) } -> std::convertible_to<std::size_t>;
  { cr.release_free_regions } -> std::convertible_to<bool>;
  { cr.release_would_help(ctx, n) } -> std::convertible_to<bool>;
};

// Mode is the engine's coalesce_mode: a data member, or a static constexpr one.
template <class R, class Mode>
concept coalesce_rule_for = requires(R const r) {
  { r.mode } -> std::convertible_to<Mode>;
};

template <class R>
concept size_rule = requires(R const r, std::size_t n) {
  r.validate();
  { r.round(n) } -> std::same_as<std::optional<std::size_t>>;
  { r.granule() } -> std::convertible_to<std::size_t>;
};

}  // namespace fraglab
