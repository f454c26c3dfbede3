#include <fraglab/runtime/params/units.hpp>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

namespace fraglab {
namespace {
__extension__ using u128 = unsigned __int128;  // exact arithmetic for 1.5GiB-style inputs
}  // namespace

std::optional<std::size_t> parse_size(std::string_view text)
{
  std::size_t i = 0;
  u128 whole = 0, frac = 0, frac_scale = 1;
  bool digits = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (frac_scale > 1'000'000'000'000'000ull) return std::nullopt;
      frac = frac * 10 + static_cast<unsigned>(text[i] - '0');
      frac_scale *= 10;
      digits = true;
    }
  }
  if (!digits) return std::nullopt;
  std::string_view const unit = text.substr(i);
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 16> units{{
      {"", 1},           {"B", 1},
      {"kB", 1000},      {"KB", 1000},     {"MB", 1000'000},        {"GB", 1000'000'000}, {"TB", 1000'000'000'000},
      {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40},
      {"K", 1ull << 10}, {"M", 1ull << 20}, {"G", 1ull << 30},      {"T", 1ull << 40},
      {"k", 1ull << 10},
  }};
  for (auto const& [name, scale] : units) {
    if (unit != name) continue;
    u128 const scaled_frac = frac * scale;
    if (scaled_frac % frac_scale != 0) return std::nullopt;  // not a whole number of bytes
    u128 const total = whole * scale + scaled_frac / frac_scale;
    if (total > std::numeric_limits<std::size_t>::max()) return std::nullopt;
    return static_cast<std::size_t>(total);
  }
  return std::nullopt;
}

std::string exact_size_text(std::size_t bytes)
{
  static constexpr std::array<std::pair<char const*, std::size_t>, 4> units{
      {{"TiB", std::size_t{1} << 40}, {"GiB", std::size_t{1} << 30}, {"MiB", std::size_t{1} << 20}, {"KiB", std::size_t{1} << 10}}};
  for (auto const& [name, unit] : units)
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + name;
  return std::to_string(bytes);
}

std::string format_size(std::size_t bytes)
{
  static constexpr std::array<char const*, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < names.size()) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0) std::snprintf(buf, sizeof buf, "%zuB", bytes);
  else std::snprintf(buf, sizeof buf, "%.1f%s", value, names[unit]);
  return buf;
}

std::uint64_t parse_count(std::string_view name, std::string_view text, std::uint64_t least, std::uint64_t most)
{
  std::string const n(name), t(text);
  std::uint64_t v = 0;
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc{} && end == text.data() + text.size() && v > most))
    throw std::invalid_argument(n + ": expected at most " + std::to_string(most) + ", got " + t);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument(n + ": expected a whole number, got '" + t + "'");
  if (v < least) throw std::invalid_argument(n + ": expected at least " + std::to_string(least) + ", got " + t);
  return v;
}

}  // namespace fraglab
