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
//
// The mapping's two numbers are read at run time (`segregated_index`), or are constants of
// the type (`tlsf_segregated_index`, TLSF's own), which the registry uses for tlsf's
// defaults.
#pragma once

#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/policies/indexes/detail/link_first.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <boost/intrusive/list.hpp>
#include <boost/intrusive/parent_from_member.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace fraglab {

struct segregated_index_params {
  unsigned sli = 5;                // second-level index bits: 2^sli lists per power of two (1..6)
  std::size_t linear_limit = 256;  // power of two; exact classes below it

  static constexpr std::string_view part = "index";
  static constexpr auto parameters()
  {
    return std::tuple{
        parameter("sli", &segregated_index_params::sli, "seglist: second-level index bits (2^sli lists per power of two)"),
        parameter("linear_limit", &segregated_index_params::linear_limit, "seglist: exact size classes below this"),
    };
  }
};

// A free chunk's place in the index: its list link, and which list it is in, so that
// taking it out needs no size-class arithmetic.
template <class Chunk>
struct segregated_hook {
  boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>> link;
  std::uint32_t list = 0;
};

// How sizes map to lists: read at run time, so that a sweep over sli or linear_limit needs
// no recompiling...
struct runtime_list_mapping {
  unsigned sli;
  unsigned linear_shift;  // log2(linear_limit)

  static runtime_list_mapping of(segregated_index_params const& p) { return {p.sli, detail::log2_floor(p.linear_limit)}; }
};

// ...or fixed at compile time, as TLSF's own code fixes them (tlsf 3.1's SL_INDEX_COUNT_LOG2
// and SMALL_BLOCK_SIZE): every shift and mask of the mapping folds to a constant, 4-6% of
// tlsf's instructions (docs/performance.md, "TLSF's lists"). An index built with other
// params is refused.
template <unsigned Sli, unsigned LinearShift>
struct fixed_list_mapping {
  static constexpr unsigned sli = Sli;
  static constexpr unsigned linear_shift = LinearShift;

  // Whether p asks for this mapping (the registry's choice of index, and of's check).
  static bool matches(segregated_index_params const& p) noexcept
  {
    return p.sli == Sli && p.linear_limit == std::size_t{1} << LinearShift;
  }

  static fixed_list_mapping of(segregated_index_params const& p)
  {
    if (!matches(p))
      throw std::invalid_argument("this index's lists are fixed at sli=" + std::to_string(Sli) +
                                  ", linear_limit=" + std::to_string(std::size_t{1} << LinearShift));
    return {};
  }
};

// The number of first levels: the linear range's, then floor(log2 n) from linear_shift to
// 63.
constexpr unsigned first_level_count(unsigned linear_shift) noexcept { return 64 - linear_shift + 1; }

// The lists of a mapping: as many as a run-time mapping asks for, in a vector, or a fixed
// mapping's count in an array inside the index, so that reaching list i is an offset from
// the index itself rather than a load of the vector's pointer, and the count a constant
// (tlsf: 3 fewer instructions an operation, 0.5-4% faster; docs/performance.md, "TLSF's
// lists").
template <class Mapping, class List>
struct list_storage {
  using type = std::vector<List>;
};
template <unsigned Sli, unsigned LinearShift, class List>
struct list_storage<fixed_list_mapping<Sli, LinearShift>, List> {
  using type = std::array<List, std::size_t{first_level_count(LinearShift)} << Sli>;
};

template <class Mapping>
struct basic_segregated_index {
  static constexpr const char* name = "seglist";
  using params = segregated_index_params;

  template <class Chunk>
  using hook = segregated_hook<Chunk>;

  template <class Chunk>
  class index {
    using link_type = decltype(segregated_hook<Chunk>::link);
    // Boost.Intrusive reaches the link inside the chunk's hook through this accessor.
    struct link_of_chunk {
      using hook_type = link_type;
      using hook_ptr = link_type*;
      using const_hook_ptr = link_type const*;
      using value_type = Chunk;
      using pointer = Chunk*;
      using const_pointer = Chunk const*;
      static hook_ptr to_hook_ptr(Chunk& c) noexcept { return &c.free_hook.link; }
      static const_hook_ptr to_hook_ptr(Chunk const& c) noexcept { return &c.free_hook.link; }
      static pointer to_value_ptr(hook_ptr n) noexcept
      {
        using boost::intrusive::get_parent_from_member;
        return get_parent_from_member<Chunk>(get_parent_from_member<segregated_hook<Chunk>>(n, &segregated_hook<Chunk>::link),
                                             &Chunk::free_hook);
      }
      static const_pointer to_value_ptr(const_hook_ptr n) noexcept { return to_value_ptr(const_cast<hook_ptr>(n)); }
    };
    using list_type = boost::intrusive::list<Chunk, boost::intrusive::function_hook<link_of_chunk>,
                                             boost::intrusive::constant_time_size<false>>;

   public:
    explicit index(params const& p = {}) : map_(Mapping::of(p))
    {
      if (p.sli < 1 || p.sli > 6) throw std::invalid_argument("sli must be in 1..6");
      if (!detail::is_pow2(p.linear_limit) || map_.linear_shift < p.sli)
        throw std::invalid_argument("linear_limit must be a power of two of at least 2^sli");
      first_levels_ = first_level_count(map_.linear_shift);
      if constexpr (requires { lists_.resize(0); }) lists_.resize(std::size_t{first_levels_} << map_.sli);
    }
    index(index&&) = default;
    ~index()
    {
      for (auto& l : lists_) l.clear();
    }

    void insert(Chunk& c)
    {
      insert_into(c, list_number(c.size));
    }

    void erase(Chunk& c) noexcept
    {
      unlink(c);
      --size_;
    }

    // fresh enters and old leaves in one step (`keyed_in_place_index`). Where fresh belongs
    // to old's list and old heads it, fresh takes old's place at the head, which is where
    // erase-then-insert would put it, and the bitmaps stay as they are.
    void exchange(Chunk& old, std::size_t /*old_size*/, Chunk& fresh) noexcept
    {
      std::uint32_t const i = old.free_hook.list;
      std::uint32_t const j = list_number(fresh.size);
      auto& l = lists_[i];
      if (j != i || &l.front() != &old) {
        // The count stays: not decremented and incremented again in memory.
        unlink(old);
        link(fresh, j);
        return;
      }
      if (&old == &fresh) return;
      fresh.free_hook.list = i;
      l.pop_front();
      detail::link_first(l, fresh);
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }

    Chunk* find_good(std::size_t n)
    {
      ++steps_;
      std::uint32_t const first = list_number<rounding::up>(n);
      std::uint32_t i = 0;
      if (first >= lists_.size() || !first_nonempty_at_or_above(first, i)) return nullptr;
      return &lists_[i].front();
    }

    // n rounded up to the next list boundary, so that any chunk of the list it maps to
    // fits n (TLSF's mapping_search); less than n only on overflow.
    [[nodiscard]] std::size_t good_fit_size(std::size_t n) const noexcept
    {
      std::size_t const step = std::size_t{1} << (class_log2(n) - map_.sli);
      return detail::align_up_checked(n, step).value_or(0);
    }

    Chunk* find_best(std::size_t n)
    {
      std::uint32_t const own = list_number(n);
      if (Chunk* c = smallest_fitting(lists_[own], n)) return c;
      std::uint32_t i = 0;
      if (own + 1 >= lists_.size() || !first_nonempty_at_or_above(own + 1, i)) return nullptr;
      return smallest_fitting(lists_[i], n);
    }

    Chunk* largest()
    {
      if (fl_bitmap_ == 0) return nullptr;
      unsigned const fl = 63u - static_cast<unsigned>(std::countl_zero(fl_bitmap_));
      unsigned const sl = 63u - static_cast<unsigned>(std::countl_zero(sl_bitmap_[fl]));
      Chunk* best = nullptr;
      for (auto& c : lists_[(fl << map_.sli) + sl]) {
        ++steps_;
        if (best == nullptr || c.size > best->size || (c.size == best->size && c.address < best->address)) best = &c;
      }
      return best;
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      for (auto const& x : lists_[list_number(c.size)])
        if (&x == &c) return true;
      return false;
    }

    [[nodiscard]] std::string check() const
    {
      std::size_t total = 0;
      for (unsigned fl = 0; fl < first_levels_; ++fl) {
        bool const fl_flag = (fl_bitmap_ >> fl) & 1u;
        if (fl_flag != (sl_bitmap_[fl] != 0)) return "first-level bitmap disagrees at " + std::to_string(fl);
        for (unsigned sl = 0; sl < (1u << map_.sli); ++sl) {
          std::uint32_t const i = (fl << map_.sli) + sl;
          auto const& l = lists_[i];
          if (((sl_bitmap_[fl] >> sl) & 1u) == l.empty()) return "second-level bitmap disagrees";
          for (auto const& c : l) {
            if (list_number(c.size) != i) return "chunk of size " + std::to_string(c.size) + " in the wrong list";
            if (c.free_hook.list != i) return "chunk of size " + std::to_string(c.size) + " records the wrong list";
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
      std::uint32_t const i = list_number(n);
      return {i >> map_.sli, i & sl_mask()};
    }

   private:
    // insert() into list i, which the caller has computed.
    void insert_into(Chunk& c, std::uint32_t i) noexcept
    {
      link(c, i);
      ++size_;
    }

    // c enters list i and the bitmaps; the count is the caller's.
    void link(Chunk& c, std::uint32_t i) noexcept
    {
      c.free_hook.list = i;
      detail::link_first(lists_[i], c);
      sl_bitmap_[i >> map_.sli] |= std::uint64_t{1} << (i & sl_mask());
      fl_bitmap_ |= std::uint64_t{1} << (i >> map_.sli);
    }

    // c leaves its list, and the bitmaps where the list empties; the count is the caller's.
    void unlink(Chunk& c) noexcept
    {
      std::uint32_t const i = c.free_hook.list;
      auto& l = lists_[i];
      l.erase(l.iterator_to(c));
      if (l.empty()) {
        unsigned const fl = i >> map_.sli;
        sl_bitmap_[fl] &= ~(std::uint64_t{1} << (i & sl_mask()));
        if (sl_bitmap_[fl] == 0) fl_bitmap_ &= ~(std::uint64_t{1} << fl);
      }
    }

    std::uint32_t sl_mask() const noexcept { return (1u << map_.sli) - 1; }

    // floor(log2 n), raised to linear_shift below the linear range, where every class is
    // 2^(linear_shift - sli) bytes wide. (n | 1: size 0 falls in list 0.)
    unsigned class_log2(std::size_t n) const noexcept { return std::max(detail::log2_floor_nonzero(n | 1), map_.linear_shift); }

    enum class rounding { down, up };

    // The list of size n, numbered first level * 2^sli + second level, so that the next
    // larger class is always the next number. With lg = class_log2(n): first level
    // lg - linear_shift (+ 1 above the linear range) and second level (n >> (lg - sli))
    // (- 2^sli above it), which add up to the expression below in both ranges, without a
    // branch between them.
    //
    // Rounding up gives the list of good_fit_size(n) (TLSF's mapping_search) without
    // rounding n first: where rounding up reaches the next power of two, 2^(sli+1) at the
    // second level is the same number as the next first level's 2^sli; one past the last
    // list where good_fit_size(n) overflows.
    template <rounding R = rounding::down>
    std::uint32_t list_number(std::size_t n) const noexcept
    {
      unsigned const lg = class_log2(n);
      unsigned const step_shift = lg - map_.sli;
      std::size_t second_level = n >> step_shift;
      if constexpr (R == rounding::up) second_level += (n & ((std::size_t{1} << step_shift) - 1)) != 0;
      return static_cast<std::uint32_t>(((lg - map_.linear_shift) << map_.sli) + second_level);
    }

    // The first non-empty list numbered i or above, through the bitmaps.
    bool first_nonempty_at_or_above(std::uint32_t i, std::uint32_t& out) const noexcept
    {
      unsigned fl = i >> map_.sli;
      std::uint64_t sl_map = sl_bitmap_[fl] & (~std::uint64_t{0} << (i & sl_mask()));
      if (sl_map == 0) {
        if (fl + 1 >= 64) return false;
        std::uint64_t const fl_map = fl_bitmap_ & (~std::uint64_t{0} << (fl + 1));
        if (fl_map == 0) return false;
        fl = static_cast<unsigned>(std::countr_zero(fl_map));
        sl_map = sl_bitmap_[fl];
      }
      out = (fl << map_.sli) + static_cast<std::uint32_t>(std::countr_zero(sl_map));
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

    [[no_unique_address]] Mapping map_;
    unsigned first_levels_ = 0;
    typename list_storage<Mapping, list_type>::type lists_;
    std::array<std::uint64_t, 64> sl_bitmap_{};  // first levels never exceed 64
    std::uint64_t fl_bitmap_ = 0;
    std::size_t size_ = 0;
    std::uint64_t steps_ = 0;
  };
};

using segregated_index = basic_segregated_index<runtime_list_mapping>;
// TLSF's mapping, the tlsf preset's defaults, as constants: the registry builds seglist with
// good fit on it whenever sli and linear_limit are these (experiments/runtime/registry).
using tlsf_list_mapping = fixed_list_mapping<5, 8>;
using tlsf_segregated_index = basic_segregated_index<tlsf_list_mapping>;

}  // namespace fraglab
