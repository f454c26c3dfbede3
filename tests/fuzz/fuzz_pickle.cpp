// The restricted pickle reader on any bytes, with and without a sink taking items as they are
// read: plain data or an input_error, never an import or a call, never a crash, a leak, a hang
// or an unbounded allocation.
//
// Byte-level mutation rarely builds what hostile pickles are made of (deep nesting, memo
// references that make cycles, declared lengths far past the end, integers past 64 bits), so
// a third of the mutations splice one such structure into the input instead.
#include <fraglab/runtime/pickle/pickle_reader.hpp>
#include "fuzz_input.hpp"

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

std::string structure(std::minstd_rand& rng)
{
  using namespace std::string_view_literals;  // "...\x00"sv keeps its zero bytes
  static constexpr std::array<std::string_view, 12> pieces{
      "("sv,                             // MARK
      "]"sv, "}"sv, ")"sv,               // empty list, dict, tuple
      "a"sv, "e"sv, "s"sv, "u"sv,        // APPEND, APPENDS, SETITEM, SETITEMS
      "q\x00"sv, "h\x00"sv, "\x94"sv,    // BINPUT 0, BINGET 0, MEMOIZE
      "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"sv,  // LONG1: 2^64-1
  };
  switch (rng() % 5) {
    case 0: {  // nesting, up to a thousand deep
      std::size_t const depth = 1 + rng() % 1000;
      return std::string(depth, ']') + std::string(depth - 1, 'a');
    }
    case 1: return std::string("X\xff\xff\xff\x7f"sv);     // BINUNICODE of 2 GiB
    case 2: return std::string("\x8b\x00\x00\x00\x01"sv);  // LONG4 of 16 MiB
    default: {
      std::string s;
      for (std::size_t n = 1 + rng() % 8; n > 0; --n) s.append(pieces[rng() % pieces.size()]);
      return s;
    }
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed)
{
  std::minstd_rand rng(seed);
  if (rng() % 3 != 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string const piece = structure(rng);
  if (size + piece.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::size_t const at = size == 0 ? 0 : rng() % size;  // before the last byte: a STOP stays last
  std::memmove(data + at + piece.size(), data + at, size - at);
  std::memcpy(data + at, piece.data(), piece.size());
  return size + piece.size();
}

namespace {

// Takes every dict offered, as the snapshot reader takes a trace's entries: the reader's
// bookkeeping of taken items (their memo slots, their batches) under any input.
struct every_dict final : fraglab::pickle::item_sink {
  bool take(fraglab::pickle::value const& item, fraglab::pickle::value const& list, std::uint64_t, bool) override
  {
    return item.is_dict() && list.is_list();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  every_dict sink;
  for (fraglab::pickle::item_sink* s : {static_cast<fraglab::pickle::item_sink*>(nullptr), static_cast<fraglab::pickle::item_sink*>(&sink)}) try {
      (void)fraglab::pickle::parse({data, size}, "fuzz.pickle", s);
    } catch (fraglab::input_error const&) {
    }
  return 0;
}
