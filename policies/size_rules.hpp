// How a request's size becomes a chunk size.
//
// size = header + request, then either rounded up to a multiple of `quantum` or, with
// power_of_two_classes, up to the next power of two (simple segregated storage, buddy); at
// least `min_size` either way. `quantum` is also the engine's granule: every chunk address
// and size is a multiple of it, which is what lets an aligned allocation carve a front
// remainder that is itself a valid chunk.
//
// `header` models a per-block boundary tag (dlmalloc's 8 bytes): Johnstone & Wilson separate
// a policy's fragmentation from implementation overhead by running with and without it.
//
// plain_quantum_size_rule is the same rule with neither a header nor classes, for presets
// whose allocator has neither (TF's BFC): two tests fewer on every allocation.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/engine/part_traits.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <tuple>

namespace fraglab {

namespace detail {

// x rounded up to a multiple of the power of two q, at least `least`; empty on overflow.
// Runs on every allocation: the overflow check is the carry flag of the addition. It is
// detail::align_up_checked with the minimum folded in, kept apart because the two compile
// differently where they are inlined: calling align_up_checked here cost best_fit and
// tf_bfc 0.2-0.4% more instructions on scp, and giving align_up_checked this carry-flag form
// cost tlsf's good-fit rounding 0.6% (callgrind, count_instructions).
[[nodiscard]] inline std::optional<std::size_t> round_to_quantum(std::size_t x, std::size_t least, std::size_t q) noexcept
{
  if (x < least) x = least;
  std::size_t up;
  if (__builtin_add_overflow(x, q - 1, &up)) return std::nullopt;
  return up & ~(q - 1);
}

inline void validate_quantum(std::size_t q)
{
  if (!detail::is_pow2(q)) throw std::invalid_argument("quantum must be a power of two");
}

}  // namespace detail

struct quantum_size_rule {
  static constexpr part_hook hooks = part_hook::power_of_two_classes;
  std::size_t quantum = 16;   // power of two
  std::size_t min_size = 16;  // smallest chunk handed out
  std::size_t header = 0;     // bytes added to every request before rounding
  bool power_of_two_classes = false;

  void validate() const { detail::validate_quantum(quantum); }

  static constexpr std::string_view part = "size";
  static constexpr std::array<std::string_view, 2> class_words{"none", "pow2"};
  static constexpr auto parameters()
  {
    using z = quantum_size_rule;
    return std::tuple{
        parameter("quantum", &z::quantum, "requests round up to a multiple of this power of two; also the address granule"),
        parameter("min_size", &z::min_size, "smallest chunk handed out"),
        parameter("header", &z::header, "bytes added to every request before rounding (boundary-tag overhead)"),
        parameter("size_classes", &z::power_of_two_classes, "none, or pow2: round up to the next power of two", class_words),
    };
  }

  [[nodiscard]] std::size_t granule() const noexcept { return quantum; }

  // Runs on every allocation: the overflow checks are the carry flags of the two additions.
  [[nodiscard]] std::optional<std::size_t> round(std::size_t n) const noexcept
  {
    std::size_t x;
    if (__builtin_add_overflow(n, header, &x)) return std::nullopt;
    if (power_of_two_classes) [[unlikely]] {
      if (x < min_size) x = min_size;
      if (x > (std::size_t{1} << 63)) return std::nullopt;
      x = std::bit_ceil(x);
      return x < quantum ? quantum : x;
    }
    return detail::round_to_quantum(x, min_size, quantum);
  }
};

struct plain_quantum_size_rule {
  std::size_t quantum = 16;   // power of two
  std::size_t min_size = 16;  // smallest chunk handed out

  void validate() const { detail::validate_quantum(quantum); }

  [[nodiscard]] std::size_t granule() const noexcept { return quantum; }

  [[nodiscard]] std::optional<std::size_t> round(std::size_t n) const noexcept
  {
    return detail::round_to_quantum(n, min_size, quantum);
  }
};

}  // namespace fraglab
