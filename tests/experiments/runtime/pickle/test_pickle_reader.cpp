// The plain-data pickle reader: values it must read exactly, and everything it must refuse
// with a byte offset (forbidden opcodes, truncation, absurd lengths, broken structure).
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/pickle/pickle_reader.hpp>
#include "support/error_text.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace fraglab::pickle {
namespace {

std::vector<std::uint8_t> from_hex(std::string const& h)
{
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<std::uint8_t> bytes(std::string const& s) { return {s.begin(), s.end()}; }

std::string error_of(std::vector<std::uint8_t> const& data)
{
  return testing::error_text<input_error>([&] { parse(data, "p.pickle"); });
}

// pickle.dumps({'segments': [], 'n': [1, 2**40, -3, 300, 70000, -2**63, 1.5, 'xé', True,
//               False, None, (1, 2), b'ab']}, protocol=4)
constexpr char const* protocol4 =
    "80049558000000000000007d94288c087365676d656e7473945d948c016e945d94284b018a060000000000014afdffffff4d2c014a7011"
    "01008a080000000000000080473ff80000000000008c0378c3a99488894e4b014b028694430261629465752e";

TEST(PickleReader, ReadsEveryPlainValueOfAProtocol4Pickle)
{
  value_ptr root = parse(from_hex(protocol4), "p.pickle");
  ASSERT_TRUE(root->is_dict());
  ASSERT_NE(root->get("segments"), nullptr);
  EXPECT_TRUE(root->get("segments")->as_list().empty());
  auto const& n = root->get("n")->as_list();
  ASSERT_EQ(n.size(), 13u);
  EXPECT_EQ(n[0]->as_int(), 1);
  EXPECT_EQ(n[1]->as_int(), std::int64_t{1} << 40);  // LONG1
  EXPECT_EQ(n[2]->as_int(), -3);                     // BININT
  EXPECT_EQ(n[3]->as_int(), 300);                    // BININT2
  EXPECT_EQ(n[4]->as_int(), 70000);
  EXPECT_EQ(n[5]->as_int(), INT64_MIN);              // LONG1 of 8 bytes
  EXPECT_EQ(std::get<double>(n[6]->v), 1.5);         // BINFLOAT
  EXPECT_EQ(n[7]->as_text(), "x\xc3\xa9");           // UTF-8 kept as bytes
  EXPECT_EQ(std::get<bool>(n[8]->v), true);
  EXPECT_EQ(std::get<bool>(n[9]->v), false);
  EXPECT_TRUE(n[10]->is_none());
  EXPECT_TRUE(n[11]->is_tuple);
  EXPECT_EQ(n[11]->as_list()[1]->as_int(), 2);
  EXPECT_EQ(std::get<std::vector<std::uint8_t>>(n[12]->v), (std::vector<std::uint8_t>{'a', 'b'}));
  EXPECT_EQ(root->get("missing"), nullptr);
}

TEST(PickleReader, MemoSharesOneObject)
{
  // pickle.dumps([l, l], protocol=2) with l = [1, 2]: the second element is a BINGET.
  value_ptr root = parse(from_hex("80025d7100285d7101284b014b02656801652e"), "p.pickle");
  auto const& items = root->as_list();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].get(), items[1].get());
  EXPECT_EQ(items[1]->as_list().size(), 2u);
}

TEST(PickleReader, RefusesOpcodesThatImportOrCall)
{
  // Protocol 0: os.system('echo hi') through GLOBAL + REDUCE. Refused at GLOBAL, byte 0.
  EXPECT_EQ(error_of(bytes("cos\nsystem\n(S'echo hi'\ntR.")),
            "p.pickle: byte 0: refused opcode 'GLOBAL': this reader only accepts plain data and never imports or calls anything");
  // STACK_GLOBAL (0x93) after the strings 'os' and 'system', protocol 4: byte 16.
  auto stack_global = from_hex("80048c026f73948c0673797374656d949352942e");
  EXPECT_NE(error_of(stack_global).find("byte 16: refused opcode 'STACK_GLOBAL'"), std::string::npos) << error_of(stack_global);
  EXPECT_NE(error_of(from_hex("80024e5c2e")).find("unknown or unsupported pickle opcode 0x5c"), std::string::npos);
  EXPECT_NE(error_of(from_hex("80024e4e522e")).find("refused opcode 'REDUCE'"), std::string::npos);
  EXPECT_NE(error_of(from_hex("80024e62")).find("refused opcode 'BUILD'"), std::string::npos);
  EXPECT_NE(error_of(from_hex("80024e4e8100")).find("refused opcode 'NEWOBJ'"), std::string::npos);
}

TEST(PickleReader, RejectsMalformedInputWithAByteOffset)
{
  EXPECT_EQ(error_of({}), "p.pickle: byte 0: empty file: expected a pickle");
  EXPECT_EQ(error_of(from_hex("80025d")), "p.pickle: byte 3: truncated: expected more bytes");
  // BINUNICODE claiming 4 GiB with 1 byte left.
  EXPECT_EQ(error_of(from_hex("800258ffffffff61")),
            "p.pickle: byte 2: length 4294967295 runs past the end of the file (1 bytes left)");
  EXPECT_EQ(error_of(from_hex("80026805")), "p.pickle: byte 2: memo key 5 was never stored");
  EXPECT_EQ(error_of(from_hex("8009")), "p.pickle: byte 0: unsupported pickle protocol 9");
  EXPECT_EQ(error_of(from_hex("80024b014b022e")), "p.pickle: byte 6: STOP with an unbalanced stack");
  EXPECT_EQ(error_of(from_hex("80024b0165")), "p.pickle: byte 4: expected a MARK before this opcode");
  EXPECT_EQ(error_of(from_hex("80024b014b0261")), "p.pickle: byte 6: appending to something that is not a list");
  EXPECT_EQ(error_of(from_hex("800261")), "p.pickle: byte 2: stack underflow");
  // Found by fuzz_pickle: the memo can make a list contain itself, directly or through
  // another list. A cycle would leak and make any walk endless: refused at STOP, and freed
  // (the sanitizer build's leak check fails this test otherwise), also when the input is
  // refused for something else before it gets there.
  EXPECT_EQ(error_of(from_hex("80025d71006800612e")),
            "p.pickle: byte 8: a container contains itself (plain data has no reference cycles)");
  EXPECT_EQ(error_of(from_hex("80025d71005d7101680061612e")),
            "p.pickle: byte 12: a container contains itself (plain data has no reference cycles)");
  EXPECT_EQ(error_of(from_hex("80025d710068006100")), "p.pickle: byte 8: unknown or unsupported pickle opcode 0x00");
  // A list shared twice is not a cycle.
  EXPECT_EQ(error_of(from_hex("80025d71005d7101680061680061302e")), "no error");
}

TEST(PickleReader, KeepsIntegersOfAnySize)
{
  // LONG1 of 9 bytes holding 2**63, and 2**64-1 (a stack frame's line number in a real
  // snapshot): kept as their bytes, so that the file stays readable.
  value_ptr v = parse(from_hex("80028a090000000000000080002e"), "p.pickle");
  ASSERT_TRUE(std::holds_alternative<big_integer>(v->v));
  EXPECT_FALSE(v->is_int());
  EXPECT_EQ(std::get<big_integer>(v->v).bytes, (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 0x80, 0}));
  v = parse(from_hex("80028a09ffffffffffffffff002e"), "p.pickle");
  EXPECT_TRUE(std::holds_alternative<big_integer>(v->v));
  // Nine bytes whose last repeats the sign still fit: -1 and 2**63-1.
  EXPECT_EQ(parse(from_hex("80028a09ffffffffffffffffff2e"), "p.pickle")->as_int(), -1);
  EXPECT_EQ(parse(from_hex("80028a09ffffffffffffff7f002e"), "p.pickle")->as_int(), INT64_MAX);
}

TEST(PickleReader, ARepeatedKeyTakesItsLastValueAsPythonReadsIt)
{
  // {'a': 1, 'a': 2} through SETITEMS: Python keeps one key, its value the last.
  value_ptr d = parse(from_hex("80027d28" "8c01614b01" "8c01614b02" "752e"), "p.pickle");
  EXPECT_EQ(std::get<dict_value>(d->v).items.size(), 1u);
  EXPECT_EQ(d->get("a")->as_int(), 2);
  // True, 1 and 1.0 are one key; the first key object stays, the value is the last.
  d = parse(from_hex("80027d28" "884b01" "4b014b02" "473ff00000000000004b03" "752e"), "p.pickle");
  ASSERT_EQ(std::get<dict_value>(d->v).items.size(), 1u);
  EXPECT_EQ(std::get<dict_value>(d->v).items[0].second->as_int(), 3);
  // Past the small size the index is used: 20 keys, then every one again.
  std::string many = "80027d28";
  for (int round = 0; round < 2; ++round)
    for (int k = 0; k < 20; ++k) {
      char item[16];
      std::snprintf(item, sizeof item, "4b%02x4b%02x", k, k + 100 * round);
      many += item;
    }
  d = parse(from_hex(many + "752e"), "p.pickle");
  auto const& items = std::get<dict_value>(d->v).items;
  ASSERT_EQ(items.size(), 20u);
  for (int k = 0; k < 20; ++k) {
    EXPECT_EQ(items[k].first->as_int(), k);
    EXPECT_EQ(items[k].second->as_int(), k + 100);
  }
}

// A list nested 200,000 deep (200 KB): read and freed without recursion (it crashed with
// SIGSEGV when freed recursively), and checked for cycles in linear time (the check on every
// insertion took minutes on 80 KB).
TEST(PickleReader, DeepNestingCostsNoStackAndLinearTime)
{
  constexpr std::size_t depth = 200'000;
  std::vector<std::uint8_t> data{0x80, 0x02};
  data.insert(data.end(), depth, ']');
  data.insert(data.end(), depth - 1, 'a');
  data.push_back('.');
  value_ptr v = parse(data, "p.pickle");
  std::size_t levels = 1;
  for (value const* at = v.get(); !at->as_list().empty(); at = at->as_list()[0].get()) ++levels;
  EXPECT_EQ(levels, depth);
  v.reset();
  // The same nesting through dicts, each the value of the one outside it.
  data.assign({0x80, 0x02});
  for (std::size_t i = 0; i < depth; ++i) data.insert(data.end(), {'}', 'K', 0x01});
  data.pop_back();
  data.pop_back();
  for (std::size_t i = 1; i < depth; ++i) data.push_back('s');
  data.push_back('.');
  // Every dict but the innermost pushed a key after it; the innermost is the last value.
  EXPECT_EQ(error_of(data), "no error");
}


// A sink that takes every dict with an 'n', as the snapshot reader takes a trace's entries.
struct numbered_sink final : item_sink {
  struct taken_item {
    std::int64_t n;
    value const* list;
    std::uint64_t index;
  };
  std::vector<taken_item> taken;
  bool take(value const& item, value const& list, std::uint64_t index, bool /*exclusive*/) override
  {
    value const* n = item.get("n");
    if (n == nullptr) return false;
    taken.push_back({n->as_int(), &list, index});
    return true;
  }
};

// {'n': k} as EMPTY_DICT MEMOIZE MARK 'n' k SETITEMS, as Python's pickler writes a dict.
std::string entry(int k, bool memoize = true)
{
  char hex[32];
  std::snprintf(hex, sizeof hex, "7d%s288c016e4b%02x75", memoize ? "94" : "", k);
  return hex;
}

TEST(PickleReader, ASinkTakesEachEntryAtItsSetitemsSoThatALongListIsNeverHeld)
{
  // [[e0, e1, e2]] with one MARK for the whole inner list, as fraglab's writer lays it out:
  // the entries are taken as each is completed, before the APPENDS that adds them.
  std::string hex = "80045d945d9428";
  for (int k = 0; k < 3; ++k) hex += entry(k);
  numbered_sink sink;
  value_ptr root = parse(from_hex(hex + "6561" "2e"), "p.pickle", &sink);  // APPENDS, APPEND
  ASSERT_EQ(sink.taken.size(), 3u);
  value const& inner = *root->as_list()[0];
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(sink.taken[k].n, static_cast<std::int64_t>(k));
    EXPECT_EQ(sink.taken[k].list, &inner);
    EXPECT_EQ(sink.taken[k].index, k);
  }
  EXPECT_TRUE(inner.as_list().empty());
  EXPECT_EQ(std::get<list_value>(inner.v).taken, 3u);
  // Cut before the APPENDS: the sink had every entry already, the reader held none.
  numbered_sink early;
  EXPECT_NE(testing::error_text<input_error>([&] { parse(from_hex(hex), "p.pickle", &early); }), "no error");
  EXPECT_EQ(early.taken.size(), 3u);
}

TEST(PickleReader, ASinkSeesPythonsBatchesAndSingleAppendsAtTheirIndices)
{
  // [x, e0, e1] in batches as Python writes them past one item (MARK ... APPENDS), then e2 by
  // APPEND: x (no 'n') is kept, the entries are taken at indices 1, 2 and 3.
  std::string hex = "80045d9428" "4b07" + entry(0) + entry(1) + "65" + entry(2) + "612e";
  numbered_sink sink;
  value_ptr root = parse(from_hex(hex), "p.pickle", &sink);
  ASSERT_EQ(sink.taken.size(), 3u);
  EXPECT_EQ(sink.taken[0].index, 1u);
  EXPECT_EQ(sink.taken[1].index, 2u);
  EXPECT_EQ(sink.taken[2].index, 3u);
  ASSERT_EQ(root->as_list().size(), 1u);
  EXPECT_EQ(root->as_list()[0]->as_int(), 7);
  EXPECT_EQ(std::get<list_value>(root->v).taken, 3u);
}

TEST(PickleReader, AnEntryTheMemoSharesIsKeptAndOneTakenIsNeverUsedAgain)
{
  // [e0, e0]: the second is a BINGET of the first, which is then not the sink's alone: both
  // are offered when appended, and kept.
  numbered_sink sink;
  value_ptr root = parse(from_hex("80045d94" "28" "4b01" + entry(5) + "6801" "652e"), "p.pickle", &sink);
  EXPECT_EQ(root->as_list().size(), 3u);
  // A taken entry fetched from the memo again, or put in a tuple, makes the pickle refused.
  EXPECT_EQ(testing::error_text<input_error>([&] { parse(from_hex("80045d9428" + entry(5) + "65" "6801" "2e"), "p.pickle", &sink); }),
            "p.pickle: byte 15: memo key 1 is an entry already read as a list's item");
  EXPECT_NE(testing::error_text<input_error>([&] { parse(from_hex("80045d9428" + entry(5) + "742e"), "p.pickle", &sink); })
                .find("an entry already read as a list's item is put in something other than a list"),
            std::string::npos);
}

TEST(PickleReader, AFileIsReadABufferAtATime)
{
  // A list of 300,000 entries (well past the reader's buffer of 1 MiB), read from a file.
  std::string body;
  for (int k = 0; k < 300'000; ++k) body += std::string("}\x94(\x8c\x01nK") + static_cast<char>(k % 256) + "u";
  std::string const path = ::testing::TempDir() + "/buffered.pickle";
  {
    std::ofstream out(path, std::ios::binary);
    out << "\x80\x04]\x94(" << body << "e.";
  }
  numbered_sink sink;
  value_ptr root = parse_file(path, &sink);
  ASSERT_EQ(sink.taken.size(), 300'000u);
  EXPECT_EQ(sink.taken[299'999].n, 299'999 % 256);
  EXPECT_EQ(sink.taken[299'999].index, 299'999u);
  EXPECT_EQ(std::get<list_value>(root->v).taken, 300'000u);
  // Cut short: the byte offset counts from the file's start, across buffers.
  {
    std::ofstream out(path, std::ios::binary);
    out << "\x80\x04]\x94(" << body << std::string("X\xff\xff\x00\x00", 5);
  }
  EXPECT_EQ(testing::error_text<input_error>([&] { parse_file(path); }),
            path + ": byte " + std::to_string(5 + body.size()) + ": length 65535 runs past the end of the file (0 bytes left)");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fraglab::pickle
