// The plain-data pickle reader: values it must read exactly, and everything it must refuse
// with a byte offset (forbidden opcodes, truncation, absurd lengths, broken structure).
#include "experiments/pickle/pickle_reader.hpp"
#include "experiments/trace/input_error.hpp"
#include "support/error_text.hpp"

#include <gtest/gtest.h>

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
  // LONG1 of 9 bytes holding 2**63: does not fit in 64 bits.
  EXPECT_EQ(error_of(from_hex("80028a090000000000000080002e")), "p.pickle: byte 2: integer does not fit in 64 bits");
  EXPECT_EQ(error_of(from_hex("8009")), "p.pickle: byte 0: unsupported pickle protocol 9");
  EXPECT_EQ(error_of(from_hex("80024b014b022e")), "p.pickle: byte 6: STOP with an unbalanced stack");
  EXPECT_EQ(error_of(from_hex("80024b0165")), "p.pickle: byte 4: expected a MARK before this opcode");
  EXPECT_EQ(error_of(from_hex("80024b014b0261")), "p.pickle: byte 6: appending to something that is not a list");
  EXPECT_EQ(error_of(from_hex("800261")), "p.pickle: byte 2: stack underflow");
  // Found by fuzz_pickle: the memo can make a list contain itself, directly or through
  // another list. A cycle would leak and make any walk endless: refused where it is made.
  EXPECT_EQ(error_of(from_hex("80025d710068006100")),
            "p.pickle: byte 7: this would make a container contain itself (plain data has no reference cycles)");
  EXPECT_EQ(error_of(from_hex("80025d71005d7101680061612e")),
            "p.pickle: byte 11: this would make a container contain itself (plain data has no reference cycles)");
  // A list shared twice is not a cycle.
  EXPECT_EQ(error_of(from_hex("80025d71005d7101680061680061302e")), "no error");
}

}  // namespace
}  // namespace fraglab::pickle
