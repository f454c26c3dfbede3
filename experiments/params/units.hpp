// Sizes as users type them: 4096, 512MiB, 80GiB, 1.5GB, 2M.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fraglab {

// Decimal units (kB, MB, GB, TB) are powers of 1000; binary ones (KiB, MiB, GiB, TiB, and
// the shorthands K, M, G, T) powers of 1024. Fractions must come to whole bytes. Empty on
// anything else, or on overflow.
std::optional<std::size_t> parse_size(std::string_view text);

// 1536 -> "1.5KiB"; exact byte counts stay exact in CSV, this is for tables.
std::string format_size(std::size_t bytes);

}  // namespace fraglab
