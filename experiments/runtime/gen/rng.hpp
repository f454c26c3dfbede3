// A random source that gives the same numbers on every machine and standard library.
// std::uniform_int_distribution and friends are implementation-defined, so workloads
// draw through these integer-only helpers over xoshiro256** (Blackman & Vigna 2018).
#pragma once

#include <fraglab/engine/detail/bits.hpp>

#include <cstdint>

namespace fraglab::gen {

class rng {
 public:
  explicit rng(std::uint64_t seed)
  {
    for (auto& s : s_) s = seed = detail::mix64(seed);
  }

  std::uint64_t next() noexcept
  {
    std::uint64_t const result = rotl(s_[1] * 5, 7) * 9;
    std::uint64_t const t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [lo, hi] (Lemire's multiply-shift; the tiny bias is irrelevant here and,
  // unlike rejection, keeps the draw count fixed).
  std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi) noexcept
  {
    __extension__ using u128 = unsigned __int128;
    auto const span = static_cast<u128>(hi - lo) + 1;
    return lo + static_cast<std::uint64_t>((static_cast<u128>(next()) * span) >> 64);
  }

  bool chance(unsigned percent) noexcept { return uniform(0, 99) < percent; }

  // A size spread evenly over powers of two in [2^lo_exp, 2^hi_exp): a log-uniform draw.
  std::uint64_t log_uniform(unsigned lo_exp, unsigned hi_exp) noexcept
  {
    unsigned const e = static_cast<unsigned>(uniform(lo_exp, hi_exp - 1));
    std::uint64_t const base = std::uint64_t{1} << e;
    return base + uniform(0, base - 1);
  }

  // A draw from [lo, hi] (lo > 0) with every octave [lo 2^k, lo 2^(k+1)) equally likely: short
  // lengths common, long ones rare, as with request and sequence lengths.
  std::uint64_t octave_uniform(std::uint64_t lo, std::uint64_t hi) noexcept
  {
    unsigned octaves = 1;
    while (octaves < 64 && (lo << octaves) > lo && (lo << octaves) <= hi) ++octaves;
    unsigned const o = static_cast<unsigned>(uniform(0, octaves - 1));
    std::uint64_t const start = lo << o;
    std::uint64_t const next = o + 1 < 64 ? lo << (o + 1) : 0;
    return uniform(start, next > start && next - 1 < hi ? next - 1 : hi);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace fraglab::gen
