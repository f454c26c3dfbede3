// Bit tricks and overflow-checked arithmetic shared by the engine and the policies.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace fraglab::detail {

constexpr bool is_pow2(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

// floor(log2(x)) for x > 0.
constexpr unsigned log2_floor(std::size_t x) noexcept
{
  return static_cast<unsigned>(std::bit_width(x) - 1);
}

// log2_floor for x known not to be 0: one bsr. log2_floor, through bit_width, which is
// defined for 0 too, became bsr, xor 63 and 63 minus that in the TLSF search, three
// instructions more an allocation (docs/performance.md, "TLSF's lists").
constexpr unsigned log2_floor_nonzero(std::size_t x) noexcept
{
  return static_cast<unsigned>(__builtin_clzll(static_cast<unsigned long long>(x)) ^ 63);
}

// Rounds x up to a multiple of the power of two q; empty on overflow.
constexpr std::optional<std::size_t> align_up_checked(std::size_t x, std::size_t q) noexcept
{
  std::size_t const mask = q - 1;
  if (x > std::numeric_limits<std::size_t>::max() - mask) return std::nullopt;
  return (x + mask) & ~mask;
}

constexpr std::size_t align_up(std::size_t x, std::size_t q) noexcept { return (x + q - 1) & ~(q - 1); }
constexpr std::uintptr_t align_up_address(std::uintptr_t x, std::size_t q) noexcept
{
  return (x + q - 1) & ~static_cast<std::uintptr_t>(q - 1);
}

// The next multiple of q (any positive q, e.g. PyTorch's 20 MiB pages) at or above x.
constexpr std::uintptr_t round_up_to_multiple(std::uintptr_t x, std::size_t q) noexcept
{
  return (x + q - 1) / q * q;
}

// Rounds x up to a multiple of any q > 0; empty on overflow.
constexpr std::optional<std::size_t> round_up_checked(std::size_t x, std::size_t q) noexcept
{
  std::size_t const rem = x % q;
  if (rem == 0) return x;
  if (x > std::numeric_limits<std::size_t>::max() - (q - rem)) return std::nullopt;
  return x + (q - rem);
}

constexpr std::optional<std::size_t> add_checked(std::size_t a, std::size_t b) noexcept
{
  if (a > std::numeric_limits<std::size_t>::max() - b) return std::nullopt;
  return a + b;
}

// The lowest multiple of q (any q > 0) at or above `from` where `size` bytes fit below
// `limit`; empty if they do not, or if rounding `from` up would wrap the address space.
// How a backend places a range without a region ever ending below its base.
constexpr std::optional<std::uintptr_t> aligned_range_below(std::uintptr_t from, std::size_t q, std::size_t size,
                                                            std::uintptr_t limit) noexcept
{
  auto const start = round_up_checked(from, q);
  if (!start || *start > limit || size > limit - *start) return std::nullopt;
  return *start;
}

// The top `bits` bits of address * 2^64 / phi: Fibonacci hashing (Knuth, TAOCP vol. 3,
// 6.4), which spreads addresses that share their low bits over 2^bits slots. 0 < bits <= 64.
constexpr std::size_t fibonacci_hash(std::uintptr_t address, unsigned bits) noexcept
{
  return static_cast<std::size_t>((static_cast<std::uint64_t>(address) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a cheap, well-mixed hash of an
// address. Used where a deterministic pseudo-random value per chunk is needed
// (treap priorities, hash buckets), identical on every machine.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace fraglab::detail
