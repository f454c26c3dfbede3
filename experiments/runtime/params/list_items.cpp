#include <fraglab/runtime/params/list_items.hpp>

namespace fraglab {

std::vector<std::string_view> list_items(std::string_view s)
{
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    else if (s[i] == ']' && depth > 0) --depth;
    else if (s[i] == ',' && depth == 0) {
      items.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(s.substr(start));
  return items;
}

}  // namespace fraglab
