// Sizes as users type them: 4096, 512MiB, 80GiB, 1.5GB, 2M.
#pragma once

#include <cstddef>
#include <cstdint>
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

// A whole number in [least, most], as text from a user (an option, a Python int's digits);
// throws std::invalid_argument naming `name`: "NAME: expected at most M, got T", "expected a
// whole number, got 'T'" (a sign, a fraction, letters) or "expected at least L, got T".
std::uint64_t parse_count(std::string_view name, std::string_view text, std::uint64_t least, std::uint64_t most);

// parse_size's inverse, exact: the largest binary unit that holds `bytes` whole (268435456 ->
// "256MiB"), else bytes ("1536" stays "1536").
std::string exact_size_text(std::size_t bytes);

}  // namespace fraglab
