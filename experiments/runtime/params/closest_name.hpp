// "Did you mean": the known name nearest a mistyped one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

// Levenshtein's edit distance (insertions, deletions, substitutions), by the two-row dynamic
// programme of Wagner and Fischer (1974).
inline std::size_t edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t const above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The name of `known` nearest `typed`, when it is near enough to be a typo (at most a third
// of its letters plus one differ, fewer than all) or `typed` begins it; else empty.
inline std::string closest_name(std::string_view typed, std::span<std::string_view const> known)
{
  std::string best;
  std::size_t best_distance = typed.size() / 3 + 2;
  for (std::string_view const k : known) {
    std::size_t const d = typed.size() >= 3 && k.starts_with(typed) ? 1 : edit_distance(typed, k);
    if (d < best_distance || (d == best_distance && !best.empty() && k < best)) {
      if (d >= std::max(typed.size(), k.size())) continue;
      best_distance = d;
      best = std::string(k);
    }
  }
  return best;
}

}  // namespace fraglab
