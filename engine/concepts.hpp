// The parts the engine composes, written down as tables of required expressions
// (in the manner of foonathan/memory) and checked as C++20 concepts.
//
// Notation: `C` is the engine's chunk type, `c` a `C&`, `n` a std::size_t, `s` a
// stream_id, `ix` an index object, `ctx` a growth_context.
//
// Free index (policies/indexes/): a spec type `X` with a nested hook and index template.
// | expression                     | result            | meaning                                        |
// |--------------------------------|-------------------|------------------------------------------------|
// | X::hook<C>                     | type              | member of every chunk while it is free          |
// | X::index<C>                    | type              | the container                                   |
// | X::params                      | type              | runtime knobs (bin base, SLI, ...)              |
// | X::index<C>(params)            |                   | an empty index                                  |
// | ix.insert(c), ix.erase(c)      | void              | c is free / stops being free                    |
// | ix.size()                      | std::size_t       | free chunks held                                |
// | ix.largest()                   | C*                | a largest free chunk (null when empty)          |
// | ix.contains(c)                 | bool              | c is reachable from the index (invariant check) |
// | ix.check()                     | std::string       | empty, or what internal invariant is broken     |
// | ix.steps()                     | std::uint64_t     | candidates examined so far (deterministic cost) |
// | ix.find_best(n) etc.           | C*                | one per fit the index serves (see fits.hpp)     |
//
// An index whose order depends on addresses alone (address-ordered lists and trees) may
// also update in place (`in_place_index`); the engine then splits and merges without
// taking the chunk out, keeping the indexed record (a split hands out its head under a new
// record, a chunk freed below it merges into it):
// | expression                     | result            | meaning                                        |
// |--------------------------------|-------------------|------------------------------------------------|
// | ix.resized(c, n)               | void              | c, indexed when its size was n, has another     |
// |                                |                   | size, and perhaps another start, and no other   |
// |                                |                   | indexed chunk lies between its old and new start|
//
// An index ordered by size (the (size, address) trees and bins, TLSF's lists) may exchange
// one chunk for another in one step (`keyed_in_place_index`); the engine then splits and
// merges through it, and the index keeps the node where the new key falls in the old
// one's place:
// | expression                     | result            | meaning                                        |
// |--------------------------------|-------------------|------------------------------------------------|
// | ix.exchange(old, n, fresh)     | void              | fresh enters, old (indexed when its size was n; |
// |                                |                   | it may have changed since) leaves. fresh may be |
// |                                |                   | old, resized                                    |
//
// Fit (policies/fits.hpp): `F::select(ix, n)` returns the chosen free chunk of size >= n
// or null, by calling the capability its rule needs; an index that lacks the capability
// does not compile with that fit (`serves<Index, Fit>` says which pairs exist).
//
// Split rule: `r.should_split(chunk_size, rounded_request)` -> bool; the allocation keeps
// the low part and the remainder becomes a free chunk.
//
// Coalesce rule: `r.mode` -> coalesce_mode (immediate, deferred to a miss, never, buddy): a
// data member (`coalescing`, set at run time) or a static constexpr one (`fixed_coalescing`,
// for presets with one mode, whose tests of it then fold away).
//
// Growth rule: `r.acquisition(ctx)` -> std::size_t bytes to ask the backend for (0: do not
// grow); `r.on_acquired(n)`, `r.on_refused(ctx, n)` -> next size to try or 0;
// `r.release_would_help(ctx, free_region_bytes)` -> bool.
//
// Size rule: `r.round(n)` -> std::optional<std::size_t> (empty on overflow; for n >= 1
// never 0, which the engine reads as overflow); `r.granule()` -> power of two every chunk
// address and size is a multiple of.
//
// Pool rule: `p.pool_key(stream, rounded)` -> a key (any copyable, equality-comparable
// type, so that it can keep a 64-bit stream whole): requests with equal keys search one free
// index, and a new region joins the pool of the request that grew it.
//
// Backend (backends/): `b.acquire(n, alignment)` -> acquisition (empty when refused);
// `b.release(base, n)` -> bool (false: this backend cannot give that range back, e.g. sbrk
// below the top);
// `b.capacity()`, `b.granularity()`, `b.acquired_bytes()`, `b.supports_merging()` (whether
// consecutive acquisitions may be adjacent and merge into one region, TF's
// SupportsCoalescing), `b.name()`; a merging backend also has `b.next_address()`, where its
// next acquisition will start, so that growth counts on a free tail only when the new
// memory really extends it.
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

template <class R>
concept size_rule = requires(R const r, std::size_t n) {
  { r.round(n) } -> std::same_as<std::optional<std::size_t>>;
  { r.granule() } -> std::convertible_to<std::size_t>;
};

}  // namespace fraglab
