// The exact search: is there a placement no higher than H?
//
// It searches the canonical placements only (Moffitt, "MiniMalloc: A Lightweight Memory
// Allocator for Hardware-Accelerated Machine Learning", ASPLOS 2023): drop every buffer as
// low as the buffers below it allow, until none can drop, and any placement becomes one no
// higher in which each buffer rests on a buffer it meets in time, or on 0. Such a placement
// is built by placing the buffers in order of offset, each where it falls on the placed ones
// (never below the one placed before: a buffer that would must wait for a later one to rest
// on). The rules below, restated from that idea, cut the search; each keeps, of every height
// that has a placement, at least one:
//
// - Next buffer: let T be the lowest end any unplaced buffer could have now. A buffer that
//   would start at or above T is not placed next: the buffer that could end at T would still
//   fall under it.
// - Ties: buffers placed one after another at one offset never meet in time, so their order
//   does not matter; only the order of the ranking is tried.
// - Section inference: in every section of time, the unplaced buffers live there stack
//   above the lowest offset any of them can still take (a waiting buffer: the floor plus the
//   smallest unplaced buffer it meets); if they cannot fit under H the branch fails. So does
//   a buffer that cannot end by H, or one that waits with nothing left to rest on. Before a
//   candidate is placed, the same holds with the floor raised to its offset.
// - Decomposition: where the unplaced buffers split into parts of time that no buffer spans,
//   each part is a problem of its own above the placed buffers, solved once.
// - Memo: a state searched to exhaustion (the buffers left, where each would fall, their
//   ranks, the floor) fails again wherever it recurs, at H or any lower height.
// - Restarts: three rankings take turns under a node limit that doubles (run()).
#pragma once

#include <fraglab/policies/offline/detail/sections.hpp>
#include <fraglab/policies/offline/detail/span_tree.hpp>
#include <fraglab/policies/offline/greedy.hpp>
#include <fraglab/policies/offline/problem.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace fraglab::offline {

// out_of_time: neither found nor proven infeasible by the deadline or within the node budget.
enum class search_outcome { found, infeasible, out_of_time };

inline constexpr std::uint64_t unlimited_nodes = std::numeric_limits<std::uint64_t>::max();

struct search_result {
  search_outcome outcome = search_outcome::out_of_time;
  std::vector<std::uint64_t> offsets;  // when found
  std::uint64_t nodes = 0;
};

namespace detail {

class canonical_search {
public:
  // The buffers of one independent part of time, by their indices in p.
  canonical_search(problem const& p, std::vector<std::uint32_t> const& part) : index_(part)
  {
    std::size_t const m = part.size();
    size_.resize(m);
    alignment_.resize(m);
    problem local;
    for (std::uint32_t const i : part) local.buffers.push_back(p.buffers[i]);
    sections const sec(local);
    first_ = sec.first;
    last_ = sec.last;
    sections_ = sec.count;
    for (std::size_t i = 0; i < m; ++i) {
      size_[i] = local.buffers[i].size;
      alignment_[i] = local.buffers[i].alignment;
    }
    span_tree spans(sections_);
    meets_.resize(m);
    for (std::uint32_t i = 0; i < m; ++i) {
      spans.for_each_meeting(first_[i], last_[i], [&](std::uint32_t j) {
        meets_[i].push_back(j);
        meets_[j].push_back(i);
      });
      spans.insert(i, first_[i], last_[i]);
    }
    // Among the buffers that can go lowest, which first: one ranking per restart (run(),
    // `rankings`). A part that the search splits off is ranked again by the bytes still
    // unplaced (rank_part).
    area_.resize(m);
    width_.resize(m);
    for (std::uint32_t i = 0; i < m; ++i) {
      area_[i] = area(local.buffers[i]);
      width_[i] = local.buffers[i].upper - local.buffers[i].lower;
    }
  }

  // Restarts: each order in turn searches up to a node limit that doubles every round, until
  // one finds a placement or exhausts its search, which proves there is none (MiniMalloc's
  // solver tries its orders round-robin the same way).
  search_result run(std::uint64_t height, clock::time_point deadline, std::uint64_t node_budget)
  {
    search_result result;
    // A state that failed under one order failed in its search, not in the order: the
    // ranks are part of the state. It fails under any lower height too.
    if (height > failed_height_) failed_.clear();
    failed_height_ = height;
    for (std::uint64_t limit = 2 * size_.size();; limit *= 2)
      for (ranking const& order : rankings) {
        if (result.nodes >= node_budget) return result;
        std::uint64_t const attempt_limit = std::min(limit, node_budget - result.nodes);
        order_ = order;
        bool const found = attempt(height, deadline, attempt_limit);
        // nodes_ is attempt_limit + 1 where the limit stopped the attempt: that node was not searched.
        result.nodes += std::min(nodes_, attempt_limit);
        if (found) {
          result.outcome = search_outcome::found;
          result.offsets = offset_;
          return result;
        }
        if (out_of_time_) return result;
        if (nodes_ <= attempt_limit) {
          result.outcome = search_outcome::infeasible;
          return result;
        }
      }
  }

  [[nodiscard]] std::vector<std::uint32_t> const& buffers() const noexcept { return index_; }

private:
  std::vector<std::uint32_t> index_;  // local buffer -> buffer of the problem
  std::vector<std::uint64_t> size_, alignment_;
  std::vector<std::uint32_t> first_, last_;
  std::vector<area_type> area_;
  std::vector<std::uint64_t> width_;  // upper - lower
  // What ranks a buffer early: the most bytes live in its most crowded section (crowd), the
  // longest lifetime (width), the most size x time (area). MiniMalloc's three preorderings
  // (Moffitt 2023), which take turns: width, area, crowd; crowd, area, width; crowd, width,
  // area. Each puts first the buffers that constrain the rest most, and where one thrashes
  // another often does not; most of MiniMalloc's challenging instances need the width-first
  // one (docs/offline.md, "How it works").
  enum class key : std::uint8_t { crowd, width, area };
  using ranking = std::array<key, 3>;
  static constexpr std::array<ranking, 3> rankings{{
      {key::width, key::area, key::crowd},
      {key::crowd, key::area, key::width},
      {key::crowd, key::width, key::area},
  }};
  ranking order_ = rankings[0];      // the ranking of this attempt
  std::vector<std::uint32_t> rank_;  // per unplaced buffer: its place in that order
  std::vector<std::vector<std::uint32_t>> meets_;
  std::size_t sections_ = 0;

  std::uint64_t height_ = 0;
  clock::time_point deadline_;
  bool out_of_time_ = false;
  std::uint64_t nodes_ = 0, node_limit_ = 0;
  std::uint64_t work_ = 0, next_clock_read_ = 0;
  std::vector<std::uint64_t> remaining_;  // per section: the bytes of the unplaced buffers live there
  std::vector<std::uint64_t> lowest_;     // per section, scratch: the lowest offset an unplaced buffer there can take
  std::vector<std::int32_t> spanning_;    // per section border, scratch: the unplaced buffers live on both sides
  std::vector<std::uint64_t> placed_;     // per buffer: 1 once placed (a word, for the trail)
  std::vector<std::uint64_t> offset_;     // per placed buffer
  std::vector<std::uint64_t> under_;      // per buffer: the top of the placed buffers it meets
  std::vector<std::vector<std::uint32_t>> levels_;  // per depth: the unplaced buffers the search places there
  struct saved { std::uint64_t* at; std::uint64_t value; };
  std::vector<saved> trail_;

  bool attempt(std::uint64_t height, clock::time_point deadline, std::uint64_t node_limit)
  {
    std::size_t const m = size_.size();
    height_ = height;
    deadline_ = deadline;
    node_limit_ = node_limit;
    out_of_time_ = false;
    nodes_ = 0;
    remaining_.assign(sections_, 0);
    lowest_.assign(sections_, no_capacity);
    spanning_.assign(sections_ + 1, 0);
    offset_.assign(m, 0);
    placed_.assign(m, 0);
    under_.assign(m, 0);
    levels_.assign(m + 1, {});
    trail_.clear();
    for (std::uint32_t i = 0; i < m; ++i) {
      levels_[0].push_back(i);
      for (std::uint32_t s = first_[i]; s < last_[i]; ++s) remaining_[s] += size_[i];
    }
    rank_.assign(m, 0);
    rank_part(levels_[0]);
    return solve(0, 0, 0);
  }

  void set(std::uint64_t& at, std::uint64_t value)
  {
    trail_.push_back({&at, at});
    at = value;
  }

  void place(std::uint32_t c, std::uint64_t at)
  {
    offset_[c] = at;
    set(placed_[c], 1);
    std::uint64_t const top = at + size_[c];
    for (std::uint32_t d : meets_[c])
      if (under_[d] < top) set(under_[d], top);
    for (std::uint32_t s = first_[c]; s < last_[c]; ++s) set(remaining_[s], remaining_[s] - size_[c]);
  }

  void undo(std::size_t mark)
  {
    while (trail_.size() > mark) {
      *trail_.back().at = trail_.back().value;
      trail_.pop_back();
    }
  }

  // Where the buffer falls to: on top of the placed buffers it meets.
  [[nodiscard]] std::uint64_t lowest_offset(std::uint32_t c) const noexcept { return align_up(under_[c], alignment_[c]); }

  // Places the buffers of levels_[depth], none below `floor`, the one placed before (at
  // `floor`) having rank `previous`.
  bool solve(std::size_t depth, std::uint64_t floor, std::uint32_t previous)
  {
    std::vector<std::uint32_t> const& todo = levels_[depth];
    if (todo.empty()) return true;
    if (++nodes_ > node_limit_) return false;
    // The clock is read every 2^16 buffers looked at, not every so many nodes: a node of a
    // large instance costs as much as a thousand of a small one.
    work_ += todo.size();
    if (work_ >= next_clock_read_) {
      next_clock_read_ = work_ + (1u << 16);
      if (clock::now() > deadline_) {
        out_of_time_ = true;
        return false;
      }
    }
    // The rest of the search depends only on which buffers are left, where each would fall,
    // their ranks, the floor and the previous rank: a state searched to exhaustion before,
    // reached again by placing other buffers or the same ones elsewhere, fails again. So does
    // one with a higher floor, or the same floor and a higher previous rank: it has fewer
    // choices. Each state keeps the lowest (floor, previous) it failed with.
    state const key = state_of(todo);
    auto const known = failed_.find(key);
    if (known != failed_.end() && std::pair(known->second.floor, known->second.previous) <= std::pair(floor, previous)) return false;
    bool const solved = search(depth, floor, previous);
    if (!solved && !out_of_time_ && nodes_ <= node_limit_) {
      if (known != failed_.end()) known->second = {floor, previous};  // lower, or it would have failed above
      else if (failed_.size() < failed_limit) failed_.emplace(key, failure{floor, previous});
    }
    return solved;
  }

  // Two independent 64-bit hashes of the state: a false match, which would cut a branch that
  // holds a placement, is as likely as guessing 128 random bits.
  struct state {
    std::uint64_t a, b;
    bool operator==(state const&) const = default;
  };
  struct state_hash {
    std::size_t operator()(state const& s) const noexcept { return s.a; }
  };
  struct failure {
    std::uint64_t floor;
    std::uint32_t previous;
  };
  static constexpr std::size_t failed_limit = std::size_t{1} << 22;
  std::unordered_map<state, failure, state_hash> failed_;  // exhausted states, valid at any height no higher
  std::uint64_t failed_height_ = 0;

  static std::uint64_t mix(std::uint64_t x) noexcept  // splitmix64's finaliser (Steele et al. 2014)
  {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  [[nodiscard]] state state_of(std::vector<std::uint32_t> const& todo) const noexcept
  {
    // Sums, so that the order of todo does not matter.
    state s{0x9e3779b97f4a7c15ULL, 0x632be59bd9b4e019ULL};
    for (std::uint32_t c : todo) {
      std::uint64_t const x = mix((std::uint64_t{c} << 32 | rank_[c]) ^ mix(under_[c]));
      s.a += x;
      s.b += mix(x ^ 0xd6e8feb86659fd93ULL);
    }
    return s;
  }

  bool search(std::size_t depth, std::uint64_t floor, std::uint32_t previous)
  {
    std::vector<std::uint32_t> const& todo = levels_[depth];
    std::uint32_t begin = std::numeric_limits<std::uint32_t>::max(), end = 0;
    for (std::uint32_t c : todo) {
      begin = std::min(begin, first_[c]);
      end = std::max(end, last_[c]);
    }
    if (auto parts = independent(todo, begin, end); parts.size() > 1) {
      // Placements in one part never constrain another's: each is solved once, and the
      // first that fails fails them all. Each is a problem of its own above the buffers
      // placed so far, searched from offset 0 again: a buffer that waited above the floor
      // for one to rest on may fall into a hole now.
      std::size_t const mark = trail_.size();
      std::vector<std::uint32_t> ranks(todo.size());
      for (std::size_t k = 0; k < todo.size(); ++k) ranks[k] = rank_[todo[k]];
      bool solved = true;
      for (auto& part : parts) {
        rank_part(part);
        levels_[depth + 1] = std::move(part);
        if (!solve(depth + 1, 0, 0)) {
          undo(mark);
          solved = false;
          break;
        }
      }
      for (std::size_t k = 0; k < todo.size(); ++k) rank_[todo[k]] = ranks[k];
      return solved;
    }
    std::uint64_t lowest_end = no_capacity;
    for (std::uint32_t c : todo) {
      // A buffer that would fall below the floor must wait for a buffer placed later to
      // rest on: it ends up at least the smallest unplaced buffer it meets above the floor,
      // and nowhere if there is none. It still bounds where the next may start (no
      // placement leaves room under the next for a buffer that could fall there).
      std::uint64_t const at = lowest_offset(c);
      std::uint64_t least = at;
      if (at < floor) {
        std::uint64_t lift = no_capacity;
        for (std::uint32_t d : meets_[c])
          if (placed_[d] == 0) lift = std::min(lift, size_[d]);
        if (lift == no_capacity) return false;
        least = align_up(floor + lift, alignment_[c]);
      }
      if (least + size_[c] > height_) return false;
      lowest_end = std::min(lowest_end, at + size_[c]);
      for (std::uint32_t s = first_[c]; s < last_[c]; ++s) lowest_[s] = std::min(lowest_[s], least);
    }
    bool fits = true;
    for (std::uint32_t s = begin; s < end; ++s) {
      if (lowest_[s] != no_capacity && lowest_[s] + remaining_[s] > height_) fits = false;
      lowest_[s] = no_capacity;
    }
    if (!fits) return false;
    struct candidate { std::uint64_t at; std::uint32_t rank, buffer; };
    std::vector<candidate> next;
    for (std::uint32_t c : todo) {
      std::uint64_t const at = lowest_offset(c);
      if (at < floor || at >= lowest_end) continue;
      if (at == floor && rank_[c] < previous) continue;
      next.push_back({at, rank_[c], c});
    }
    std::sort(next.begin(), next.end(), [](candidate const& a, candidate const& b) {
      return a.at != b.at ? a.at < b.at : a.rank < b.rank;
    });
    // A candidate raises the floor to its offset, and every section's unplaced bytes must
    // then fit above it (its own included, where it lives: the rest meet it and go on top).
    // The candidates come in order of offset, so the first that fails ends the list.
    std::uint64_t most = 0;
    for (std::uint32_t s = begin; s < end; ++s) most = std::max(most, remaining_[s]);
    for (candidate const& c : next) {
      if (c.at + most > height_) break;
      std::size_t const mark = trail_.size();
      place(c.buffer, c.at);
      std::vector<std::uint32_t>& rest = levels_[depth + 1];
      rest.clear();
      for (std::uint32_t d : todo)
        if (d != c.buffer) rest.push_back(d);
      if (solve(depth + 1, c.at, c.rank)) return true;
      undo(mark);
      if (out_of_time_ || nodes_ > node_limit_) return false;
    }
    return false;
  }

  // Ranks the buffers by this attempt's ranking, the crowd counting the bytes still unplaced.
  void rank_part(std::vector<std::uint32_t> const& part)
  {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> crowd;  // (crowd, buffer)
    crowd.reserve(part.size());
    for (std::uint32_t c : part) {
      std::uint64_t most = 0;
      for (std::uint32_t s = first_[c]; s < last_[c]; ++s) most = std::max(most, remaining_[s]);
      crowd.emplace_back(most, c);
    }
    std::sort(crowd.begin(), crowd.end(), [&](auto const& a, auto const& b) {
      for (key const k : order_) {
        if (k == key::crowd && a.first != b.first) return a.first > b.first;
        if (k == key::area && area_[a.second] != area_[b.second]) return area_[a.second] > area_[b.second];
        if (k == key::width && width_[a.second] != width_[b.second]) return width_[a.second] > width_[b.second];
      }
      return a.second < b.second;
    });
    for (std::uint32_t r = 0; r < crowd.size(); ++r) rank_[crowd[r].second] = r;
  }

  // The buffers split where no border between sections [begin, end) has a buffer live on
  // both sides; one part if none.
  std::vector<std::vector<std::uint32_t>> independent(std::vector<std::uint32_t> const& todo, std::uint32_t begin, std::uint32_t end)
  {
    for (std::uint32_t c : todo) {
      ++spanning_[first_[c] + 1];
      --spanning_[last_[c]];
    }
    // part_at[k - begin]: the part of a buffer starting at section k.
    std::vector<std::uint32_t> part_at;
    std::int32_t live = 0;
    std::uint32_t parts = 0;
    part_at.resize(end - begin);
    for (std::uint32_t k = begin; k < end; ++k) {
      live += spanning_[k];
      spanning_[k] = 0;
      if (k > begin && live == 0) ++parts;
      part_at[k - begin] = parts;
    }
    spanning_[end] = 0;
    std::vector<std::vector<std::uint32_t>> split(parts + 1);
    if (parts == 0) return split;
    for (std::uint32_t c : todo) split[part_at[first_[c] - begin]].push_back(c);
    // Drop parts that are empty (a border no buffer starts after).
    std::erase_if(split, [](auto const& part) { return part.empty(); });
    return split;
  }
};

// The independent parts of time: the buffers that occupy space, split where none spans.
inline std::vector<std::vector<std::uint32_t>> independent_parts(problem const& p)
{
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < p.buffers.size(); ++i)
    if (occupies_space(p.buffers[i])) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
  std::vector<std::vector<std::uint32_t>> parts;
  std::uint64_t reach = 0;
  for (std::uint32_t i : order) {
    if (parts.empty() || p.buffers[i].lower >= reach) parts.emplace_back();
    parts.back().push_back(i);
    reach = std::max(reach, p.buffers[i].upper);
  }
  return parts;
}

}  // namespace detail

// A placement no higher than `height`, the proof that none exists, or neither by the deadline.
class exact_search {
public:
  explicit exact_search(problem const& p) : problem_(p)
  {
    for (auto const& part : detail::independent_parts(p)) parts_.emplace_back(p, part);
  }

  // The node budget makes a bounded search deterministic, where a deadline depends on the
  // machine: the tests set one.
  search_result within(std::uint64_t height, clock::time_point deadline, std::uint64_t node_budget = unlimited_nodes)
  {
    search_result all;
    all.offsets.assign(problem_.buffers.size(), 0);
    for (auto& part : parts_) {
      search_result r = part.run(height, deadline, node_budget - std::min(node_budget, all.nodes));
      all.nodes += r.nodes;
      if (r.outcome != search_outcome::found) {
        all.outcome = r.outcome;
        all.offsets.clear();
        return all;
      }
      for (std::size_t k = 0; k < r.offsets.size(); ++k) all.offsets[part.buffers()[k]] = r.offsets[k];
    }
    all.outcome = search_outcome::found;
    return all;
  }

private:
  problem const& problem_;
  std::vector<detail::canonical_search> parts_;
};

}  // namespace fraglab::offline
