#pragma once
// The one way a comma-separated option value is cut into items: -p's policy list, a spec's
// KEY=VALUEs, --vary's values, --columns and PyTorch's bracketed lists all use it, so a list
// value such as roundup_power2_divisions=[1:4,>:2] is one item wherever it is written.

#include <string_view>
#include <vector>

namespace fraglab {

// `s` cut at the commas outside square brackets. Empty items are kept (`a,,b` is three), so
// that a caller can refuse them or skip them as its option's grammar says; "" is one empty item.
std::vector<std::string_view> list_items(std::string_view s);

}  // namespace fraglab
