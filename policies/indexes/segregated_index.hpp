// Segregated free lists with two-level bitmaps: the structure of TLSF (Masmano, Ripoll,
// Crespo, Real, ECRTS 2004) and, in spirit, of dlmalloc's small bins.
//
// Sizes below `linear_limit` fall in exact classes `linear_limit / 2^sli` bytes apart
// (8 bytes with the defaults, dlmalloc's small-bin spacing). Above, the first level is
// floor(log2 n) and the second level the next `sli` bits below the leading one, so each
// power of two is cut into 2^sli lists. Within a list, chunks are LIFO (TLSF inserts at
// the head).
//
// Fits served:
// - good fit (TLSF): round the request up to the next list boundary, so that every chunk
//   of the list found fits, and take that list's head: O(1) through the bitmaps. Waste is
//   at most 1/2^sli of the request.
// - best fit: search the request's own list for its smallest fitting chunk (lowest address
//   on ties), else the smallest chunk of the next non-empty list. Exact, but O(list length).
#pragma once

#include "engine/detail/bits.hpp"

#include <boost/intrusive/list.hpp>

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab {

struct segregated_index_params {
  unsigned sli = 5;                // second-level index bits: 2^sli lists per power of two (1..6)
  std::size_t linear_limit = 256;  // power of two; exact classes below it
};

struct segregated_index {
  static constexpr const char* name = "seglist";
  using params = segregated_index_params;

  template <class Chunk>
  using hook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

  template <class Chunk>
  class index {
    using list_type = boost::intrusive::list<Chunk, boost::intrusive::member_hook<Chunk, hook<Chunk>, &Chunk::free_hook>,
                                             boost::intrusive::constant_time_size<false>>;
    struct cls {
      unsigned fl, sl;
    };

   public:
    explicit index(params const& p = {})
        : sli_(p.sli), linear_shift_(detail::log2_floor(p.linear_limit))
    {
      if (p.sli < 1 || p.sli > 6) throw std::invalid_argument("sli must be in 1..6");
      if (!detail::is_pow2(p.linear_limit) || linear_shift_ < p.sli)
        throw std::invalid_argument("linear_limit must be a power of two of at least 2^sli");
      first_levels_ = 64 - linear_shift_ + 1;
      lists_.resize(std::size_t{first_levels_} << sli_);
      sl_bitmap_.assign(first_levels_, 0);
    }
    index(index&&) = default;
    ~index()
    {
      for (auto& l : lists_) l.clear();
    }

    void insert(Chunk& c)
    {
      cls const k = class_of(c.size);
      list_at(k).push_front(c);
      sl_bitmap_[k.fl] |= std::uint64_t{1} << k.sl;
      fl_bitmap_ |= std::uint64_t{1} << k.fl;
      ++size_;
    }

    void erase(Chunk& c) noexcept
    {
      cls const k = class_of(c.size);
      auto& l = list_at(k);
      l.erase(l.iterator_to(c));
      if (l.empty()) {
        sl_bitmap_[k.fl] &= ~(std::uint64_t{1} << k.sl);
        if (sl_bitmap_[k.fl] == 0) fl_bitmap_ &= ~(std::uint64_t{1} << k.fl);
      }
      --size_;
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }

    Chunk* find_good(std::size_t n)
    {
      std::size_t const rounded = good_fit_size(n);
      if (rounded < n) return nullptr;
      ++steps_;
      cls k{};
      if (!first_nonempty_at_or_above(class_of(rounded), k)) return nullptr;
      return &list_at(k).front();
    }

    // n rounded up to the next list boundary, so that any chunk of the list it maps to
    // fits n (TLSF's mapping_search); less than n only on overflow.
    [[nodiscard]] std::size_t good_fit_size(std::size_t n) const noexcept
    {
      std::size_t const step = n < linear_limit() ? linear_step() : std::size_t{1} << (detail::log2_floor(n) - sli_);
      return detail::round_up_checked(n, step).value_or(0);
    }

    Chunk* find_best(std::size_t n)
    {
      cls const own = class_of(n);
      if (Chunk* c = smallest_fitting(list_at(own), n)) return c;
      cls k{};
      if (!next_class(own, k) || !first_nonempty_at_or_above(k, k)) return nullptr;
      return smallest_fitting(list_at(k), n);
    }

    Chunk* largest()
    {
      if (fl_bitmap_ == 0) return nullptr;
      unsigned const fl = 63u - static_cast<unsigned>(std::countl_zero(fl_bitmap_));
      unsigned const sl = 63u - static_cast<unsigned>(std::countl_zero(sl_bitmap_[fl]));
      Chunk* best = nullptr;
      for (auto& c : list_at({fl, sl})) {
        ++steps_;
        if (best == nullptr || c.size > best->size || (c.size == best->size && c.address < best->address)) best = &c;
      }
      return best;
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      for (auto const& x : lists_[flat(class_of(c.size))])
        if (&x == &c) return true;
      return false;
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t total = 0;
      for (unsigned fl = 0; fl < first_levels_; ++fl) {
        bool const fl_flag = (fl_bitmap_ >> fl) & 1u;
        if (fl_flag != (sl_bitmap_[fl] != 0)) return "first-level bitmap disagrees at " + std::to_string(fl);
        for (unsigned sl = 0; sl < (1u << sli_); ++sl) {
          auto const& l = lists_[flat({fl, sl})];
          if (((sl_bitmap_[fl] >> sl) & 1u) == l.empty()) return "second-level bitmap disagrees";
          for (auto const& c : l) {
            cls const k = class_of(c.size);
            if (k.fl != fl || k.sl != sl) return "chunk of size " + std::to_string(c.size) + " in the wrong list";
            ++total;
          }
        }
      }
      return total == size_ ? std::string{} : "lists do not add up to the index size";
    }

    template <class F>
    void for_each(F&& f) const
    {
      for (auto const& l : lists_)
        for (auto const& c : l) f(c);
    }

    // The (first level, second level) list a size belongs to; public for tests.
    [[nodiscard]] std::pair<unsigned, unsigned> list_of(std::size_t n) const noexcept
    {
      cls const k = class_of(n);
      return {k.fl, k.sl};
    }

   private:
    std::size_t linear_limit() const noexcept { return std::size_t{1} << linear_shift_; }
    std::size_t linear_step() const noexcept { return std::size_t{1} << (linear_shift_ - sli_); }

    cls class_of(std::size_t n) const noexcept
    {
      if (n < linear_limit()) return {0, static_cast<unsigned>(n >> (linear_shift_ - sli_))};
      unsigned const lg = detail::log2_floor(n);
      return {lg - linear_shift_ + 1, static_cast<unsigned>((n >> (lg - sli_)) - (std::size_t{1} << sli_))};
    }

    std::size_t flat(cls k) const noexcept { return (std::size_t{k.fl} << sli_) + k.sl; }
    list_type& list_at(cls k) noexcept { return lists_[flat(k)]; }

    bool next_class(cls k, cls& out) const noexcept
    {
      if (k.sl + 1 < (1u << sli_)) out = {k.fl, k.sl + 1};
      else if (k.fl + 1 < first_levels_) out = {k.fl + 1, 0};
      else return false;
      return true;
    }

    bool first_nonempty_at_or_above(cls k, cls& out) noexcept
    {
      std::uint64_t sl_map = sl_bitmap_[k.fl] & (~std::uint64_t{0} << k.sl);
      unsigned fl = k.fl;
      if (sl_map == 0) {
        if (k.fl + 1 >= 64) return false;
        std::uint64_t const fl_map = fl_bitmap_ & (~std::uint64_t{0} << (k.fl + 1));
        if (fl_map == 0) return false;
        fl = static_cast<unsigned>(std::countr_zero(fl_map));
        sl_map = sl_bitmap_[fl];
      }
      out = {fl, static_cast<unsigned>(std::countr_zero(sl_map))};
      return true;
    }

    Chunk* smallest_fitting(list_type& l, std::size_t n) noexcept
    {
      Chunk* best = nullptr;
      for (auto& c : l) {
        ++steps_;
        if (c.size >= n && (best == nullptr || c.size < best->size || (c.size == best->size && c.address < best->address)))
          best = &c;
      }
      return best;
    }

    unsigned sli_;
    unsigned linear_shift_;
    unsigned first_levels_ = 0;
    std::vector<list_type> lists_;
    std::vector<std::uint64_t> sl_bitmap_;
    std::uint64_t fl_bitmap_ = 0;
    std::size_t size_ = 0;
    std::uint64_t steps_ = 0;
  };
};

}  // namespace fraglab
