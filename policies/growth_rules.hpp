// How much memory to ask the backend for when no free chunk fits.
//
// | kind     | acquisition on a miss of `need` bytes                                   | from        |
// |----------|-------------------------------------------------------------------------|-------------|
// | fixed    | one region of `initial` bytes, once; never again                        | RMM fixed pools, TF without allow_growth (initial = limit) |
// | doubling | a region of `current` bytes, `current` starting at `initial` and        | TF BFC allow_growth |
// |          | multiplied by `factor` until it holds `need`; after a growth that did   |             |
// |          | not need enlarging, `current` is multiplied for next time              |             |
// | exact    | `need` less any free tail the new memory will merge with (sbrk)         | Johnstone & Wilson's heap model |
// | segments | `need` <= small_request: small_segment; < medium_request:               | PyTorch caching allocator |
// |          | medium_segment; else need rounded up to large_round                     |             |
// | proportional | max(need, `initial`) first, then max(need, factor x bytes held)     | RMM pool_memory_resource |
//
// Every kind stops at `memory_limit` (acquired bytes never exceed it). If the backend
// refuses, `backoff` < 1 retries with backoff x the size (rounded to the granularity) while
// that still holds the request (TF's 0.9 back-off); 0 disables the retry.
// `release_free_regions` gives every region with no live block back to the backend after a
// failed growth and tries once more (TF's garbage collection, PyTorch's empty-cache retry);
// with `release_only_if_it_helps`, only when the request could then fit under the limit
// (TF). `backoff_once` limits the back-off to the first refusal ever (TF's
// started_backpedal_).
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/part_interface.hpp>
#include <fraglab/engine/results.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

namespace fraglab {

enum class growth_kind : std::uint8_t { fixed, doubling, exact, segments, proportional };

inline constexpr std::array<std::string_view, 5> growth_kind_names{"fixed", "doubling", "exact", "segments", "proportional"};

constexpr std::string_view to_string(growth_kind k) noexcept { return growth_kind_names[static_cast<std::size_t>(k)]; }

struct growth_rule {
  static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

  growth_kind kind = growth_kind::exact;
  std::size_t initial = std::size_t{2} << 20;
  double factor = 2.0;
  double backoff = 0.0;
  std::size_t memory_limit = unlimited;
  bool release_free_regions = false;
  bool backoff_once = false;  // TF: the 0.9x back-off runs on the first refusal only, ever
  bool backoff_to_need = false;  // RMM: a back-off below the request tries the request itself, once
  bool release_only_if_it_helps = false;  // TF: release only if need <= limit - acquired + their total
  std::size_t small_request = std::size_t{1} << 20;
  std::size_t small_segment = std::size_t{2} << 20;
  std::size_t medium_request = std::size_t{10} << 20;
  std::size_t medium_segment = std::size_t{20} << 20;
  std::size_t large_round = std::size_t{2} << 20;

  static constexpr double min_doubling_factor = 1.001;

  static constexpr std::string_view part = "growth";
  static constexpr auto parameters()
  {
    using g = growth_rule;
    return std::tuple{
        parameter("growth", &g::kind, "exact, doubling, fixed, segments or proportional (max(need, factor x held))", growth_kind_names),
        parameter("initial_region", &g::initial, "fixed: the pool's size; doubling: the first region's size"),
        parameter("growth_factor", &g::factor, "doubling: how much each region grows"),
        parameter("backoff", &g::backoff, "on a refused acquisition retry with backoff x size (0: no retry; TF 0.9)"),
        parameter("backoff_once", &g::backoff_once, "back off on the first refusal only, ever (TF)"),
        parameter("backoff_to_need", &g::backoff_to_need, "when backing off below the request, try the request itself once (RMM)"),
        parameter("memory_limit", &g::memory_limit, "the most bytes ever held from the backend"),
        parameter("release_free_regions", &g::release_free_regions, "after a failed growth, release wholly free regions and retry"),
        parameter("small_request", &g::small_request, "segments: requests up to this get a small segment"),
        parameter("small_segment", &g::small_segment, "segments: size of a small segment"),
        parameter("medium_request", &g::medium_request, "segments: requests below this get a medium segment"),
        parameter("medium_segment", &g::medium_segment, "segments: size of a medium segment"),
        parameter("large_round", &g::large_round, "segments: larger requests round up to a multiple of this"),
    };
  }

  void validate() const
  {
    if (!(factor >= 1.0)) throw std::invalid_argument("growth factor must be at least 1");
    // Doubling multiplies the region size until it holds the request: at a factor of 1 it
    // never would, and just above 1 it would take billions of steps (one byte each).
    if (kind == growth_kind::doubling && !(factor >= min_doubling_factor))
      throw std::invalid_argument("growth factor must be at least 1.001 for doubling growth, which multiplies the region "
                                  "size by it until the request fits; got " + std::to_string(factor));
    if (backoff < 0.0 || backoff >= 1.0) throw std::invalid_argument("backoff must be in [0, 1)");
    if (large_round == 0) throw std::invalid_argument("large_round must be positive");
  }

  // Bookkeeping the rule carries between misses (not a parameter).
  struct state_type {
    std::size_t current = 0;  // doubling: the next region's size
    bool enlarged = false;    // doubling: the last decision had to enlarge `current`
    bool acquired_once = false;
    bool backed_off = false;  // a refusal has been answered with a back-off already
    bool in_backoff = false;  // within one back-off sequence (several steps in a row)
  } state{};

  [[nodiscard]] growth_decision acquisition(growth_context const& ctx)
  {
    std::size_t const available = memory_limit > ctx.acquired ? memory_limit - ctx.acquired : 0;
    std::size_t bytes = 0;
    state.enlarged = false;
    switch (kind) {
      case growth_kind::fixed:
        if (state.acquired_once) return {0, alloc_status::no_growth};
        bytes = initial;
        break;
      case growth_kind::doubling:
        state.current = std::max(state.current, initial);
        while (ctx.need > state.current) {
          state.current = scaled(state.current);
          state.enlarged = true;
        }
        bytes = state.current;
        break;
      case growth_kind::exact:
        bytes = ctx.need > ctx.tail_free ? ctx.need - ctx.tail_free : ctx.need;
        break;
      case growth_kind::proportional: {
        long double const grown = static_cast<long double>(ctx.acquired) * factor;
        std::size_t const base = ctx.acquired == 0 ? initial
                                 : grown >= static_cast<long double>(unlimited) ? unlimited
                                                                                 : static_cast<std::size_t>(grown);
        bytes = std::max(ctx.need, base);
        break;
      }
      case growth_kind::segments:
        bytes = ctx.need <= small_request    ? small_segment
                : ctx.need < medium_request ? medium_segment
                                            : detail::round_up_checked(ctx.need, large_round).value_or(unlimited);
        break;
    }
    bytes = round_to(bytes, ctx.granularity);
    if (bytes > available) {
      // Like TF, take what the limit still allows when that is enough for the request.
      std::size_t const floor_available = available / ctx.granularity * ctx.granularity;
      std::size_t const minimum = kind == growth_kind::exact ? bytes : ctx.need;
      if (kind == growth_kind::fixed || floor_available < minimum || floor_available == 0)
        return {0, alloc_status::limit};
      bytes = floor_available;
    }
    return {bytes, alloc_status::ok};
  }

  // The backend refused `bytes`; the next size to try, or 0 to give up.
  [[nodiscard]] std::size_t on_refused(growth_context const& ctx, std::size_t bytes)
  {
    if (backoff <= 0.0 || (backoff_once && state.backed_off && !state.in_backoff)) return 0;
    state.in_backoff = true;
    state.backed_off = true;
    auto const next = round_to(static_cast<std::size_t>(static_cast<long double>(bytes) * backoff), ctx.granularity);
    if (next >= ctx.need && next < bytes) return next;
    if (backoff_to_need && bytes > ctx.need) return ctx.need;
    state.in_backoff = false;
    return 0;
  }

  // Whether releasing wholly free regions of `free_region_bytes` in total is worth trying.
  [[nodiscard]] bool release_would_help(growth_context const& ctx, std::size_t free_region_bytes) const noexcept
  {
    if (!release_free_regions || free_region_bytes == 0) return false;
    if (!release_only_if_it_helps) return true;
    std::size_t const room = memory_limit > ctx.acquired ? memory_limit - ctx.acquired : 0;
    return ctx.need <= room || ctx.need - room <= free_region_bytes;
  }

  void on_acquired(std::size_t /*bytes*/)
  {
    state.in_backoff = false;
    state.acquired_once = true;
    if (kind == growth_kind::doubling && !state.enlarged) state.current = scaled(state.current);
  }

  // The size the next doubling region would have (for tests and dumps).
  [[nodiscard]] std::size_t current_region_size() const noexcept { return std::max(state.current, initial); }

  std::size_t scaled(std::size_t x) const
  {
    long double const y = static_cast<long double>(x) * factor;
    if (y >= static_cast<long double>(unlimited)) return unlimited;
    auto const r = static_cast<std::size_t>(y);
    return r > x ? r : x + 1;
  }

  static std::size_t round_to(std::size_t x, std::size_t granularity)
  {
    return detail::round_up_checked(x, granularity).value_or(unlimited / granularity * granularity);
  }
};

}  // namespace fraglab
