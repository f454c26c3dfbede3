// Which of up to 64 * Words bins are non-empty, and the lowest non-empty bin from a given
// one in a constant number of steps: one word for up to 64 bins, and above that a summary
// word over the words, as TLSF's first-level bitmap sits over its second-level ones
// (Masmano et al., ECRTS 2004).
#pragma once

#include <bit>
#include <cstdint>
#include <string>

namespace fraglab::detail {

template <unsigned Words>
class bin_bitmap {
  static_assert(Words >= 1 && Words <= 64, "one summary word covers at most 64 words");

 public:
  static constexpr unsigned capacity = 64 * Words;
  static constexpr unsigned none = capacity;  // what a search that finds nothing returns

  void set(unsigned b) noexcept
  {
    words_[b / 64] |= bit(b % 64);
    if constexpr (Words > 1) summary_ |= bit(b / 64);
  }

  void reset(unsigned b) noexcept
  {
    words_[b / 64] &= ~bit(b % 64);
    if constexpr (Words > 1)
      if (words_[b / 64] == 0) summary_ &= ~bit(b / 64);
  }

  [[nodiscard]] bool test(unsigned b) const noexcept { return (words_[b / 64] >> (b % 64)) & 1u; }

  [[nodiscard]] bool empty() const noexcept
  {
    if constexpr (Words == 1) return words_[0] == 0;
    else return summary_ == 0;
  }

  // The lowest set bin numbered b or above, or `none`; b must be below `capacity`.
  [[nodiscard]] unsigned first_from(unsigned b) const noexcept
  {
    return first_in_or_after(b / 64, ~std::uint64_t{0} << (b % 64));
  }

  // The lowest set bin above b, or `none`; b must be below `capacity`. The mask is shifted
  // in two steps so that b % 64 == 63 gives an empty mask, not a shift by 64.
  [[nodiscard]] unsigned first_after(unsigned b) const noexcept
  {
    return first_in_or_after(b / 64, (~std::uint64_t{0} << (b % 64)) << 1);
  }

  // The highest set bin; the bitmap must not be empty.
  [[nodiscard]] unsigned highest() const noexcept
  {
    unsigned w = 0;
    if constexpr (Words > 1) w = top(summary_);
    return 64 * w + top(words_[w]);
  }

  // Empty when the summary agrees with the words.
  [[nodiscard]] std::string check() const
  {
    if constexpr (Words > 1)
      for (unsigned w = 0; w < Words; ++w)
        if (((summary_ >> w) & 1u) != (words_[w] != 0))
          return "summary bit " + std::to_string(w) + " disagrees with its word";
    return {};
  }

 private:
  static constexpr std::uint64_t bit(unsigned i) noexcept { return std::uint64_t{1} << i; }
  static unsigned lowest(std::uint64_t x) noexcept { return static_cast<unsigned>(std::countr_zero(x)); }
  static unsigned top(std::uint64_t x) noexcept { return 63u - static_cast<unsigned>(std::countl_zero(x)); }

  // The lowest set bin among word w's bits in `mask`, else in the words after w.
  unsigned first_in_or_after(unsigned w, std::uint64_t mask) const noexcept
  {
    std::uint64_t const here = words_[w] & mask;
    if (here != 0) return 64 * w + lowest(here);
    if constexpr (Words == 1) {
      return none;
    } else {
      std::uint64_t const later = summary_ & ((~std::uint64_t{0} << w) << 1);
      if (later == 0) return none;
      unsigned const next = lowest(later);
      return 64 * next + lowest(words_[next]);
    }
  }

  std::uint64_t words_[Words] = {};
  std::uint64_t summary_ = 0;  // bit w: words_[w] != 0 (unused with one word)
};

}  // namespace fraglab::detail
