#include "experiments/pickle/pickle_reader.hpp"

#include "experiments/trace/input_error.hpp"
#include "experiments/trace/input_file.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <unordered_map>
#include <memory>
#include <vector>

namespace fraglab::pickle {
namespace {

class machine {
 public:
  machine(std::span<std::uint8_t const> data, std::string const& name) : data_(data), name_(name) {}
  machine(machine const&) = delete;
  machine& operator=(machine const&) = delete;
  // A refused input may have left a cycle (built through the memo before STOP found it), which
  // shared ownership would never free: every container still alive is emptied.
  ~machine()
  {
    if (accepted_) return;
    std::vector<value_ptr> unlinked;
    for (auto const& weak : containers_)
      if (auto c = weak.lock()) c->release_children(unlinked);
  }

  value_ptr run()
  {
    if (data_.empty()) fail(0, "empty file: expected a pickle");
    for (;;) {
      std::size_t const at = pos_;
      std::uint8_t const op = byte();
      switch (op) {
        case 0x80: {  // PROTO
          std::uint8_t const proto = byte();
          if (proto > 5) fail(at, "unsupported pickle protocol " + std::to_string(proto));
          break;
        }
        case 0x95: (void)fixed<std::uint64_t>(8); break;  // FRAME: framing only
        case '.': {  // STOP
          if (stack_.size() != 1 || !marks_.empty()) fail(at, "STOP with an unbalanced stack");
          refuse_cycles(at);
          accepted_ = true;
          return stack_.back();
        }
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case '0': pop(at); break;                          // POP
        case '1': pop_mark(at); break;                     // POP_MARK
        case '2': push(top(at)); break;                    // DUP
        case 'N': push(make(none_value{})); break;
        case 0x88: push(make(true)); break;   // NEWTRUE
        case 0x89: push(make(false)); break;  // NEWFALSE
        case 'J': push(make(static_cast<std::int64_t>(fixed<std::int32_t>(4)))); break;  // BININT
        case 'K': push(make(static_cast<std::int64_t>(byte()))); break;                  // BININT1
        case 'M': push(make(static_cast<std::int64_t>(fixed<std::uint16_t>(2)))); break; // BININT2
        case 0x8a: push(long_bytes(at, byte())); break;                                  // LONG1
        case 0x8b: push(long_bytes(at, fixed<std::uint32_t>(4))); break;                 // LONG4
        case 'G': {  // BINFLOAT: big-endian double
          std::uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = bits << 8 | byte();
          push(make(std::bit_cast<double>(bits)));
          break;
        }
        case 0x8c: push(make(text(at, byte()))); break;                  // SHORT_BINUNICODE
        case 'X': push(make(text(at, fixed<std::uint32_t>(4)))); break;  // BINUNICODE
        case 0x8d: push(make(text(at, fixed<std::uint64_t>(8)))); break; // BINUNICODE8
        case 'U': push(make(text(at, byte()))); break;                   // SHORT_BINSTRING
        case 'T': push(make(text(at, fixed<std::uint32_t>(4)))); break;  // BINSTRING
        case 'C': push(make(raw(at, byte()))); break;                    // SHORT_BINBYTES
        case 'B': push(make(raw(at, fixed<std::uint32_t>(4)))); break;   // BINBYTES
        case 0x8e: push(make(raw(at, fixed<std::uint64_t>(8)))); break;  // BINBYTES8
        case '}': push(container(dict_value{})); break;                  // EMPTY_DICT
        case ']': push(container(list_value{})); break;                  // EMPTY_LIST
        case ')': push(make_tuple({})); break;                           // EMPTY_TUPLE
        case 0x8f: push(container(list_value{})); break;                 // EMPTY_SET (read as a list)
        case 0x85: push(make_tuple(take(at, 1))); break;                 // TUPLE1
        case 0x86: push(make_tuple(take(at, 2))); break;                 // TUPLE2
        case 0x87: push(make_tuple(take(at, 3))); break;                 // TUPLE3
        case 't': push(make_tuple(take_to_mark(at))); break;             // TUPLE
        case 0x91: push(make_tuple(take_to_mark(at))); break;            // FROZENSET (read as a tuple)
        case 'l': push(container(list_value{take_to_mark(at)})); break;  // LIST
        case 'd': {                                                      // DICT
          auto items = take_to_mark(at);
          auto d = container(dict_value{});
          add_pairs(at, *d, items);
          push(d);
          break;
        }
        case 'a': {  // APPEND
          auto item = pop(at);
          list_of(at, top(at)).items.push_back(std::move(item));
          break;
        }
        case 'e':     // APPENDS
        case 0x90: {  // ADDITEMS
          auto items = take_to_mark(at);
          auto& l = list_of(at, top(at)).items;
          l.insert(l.end(), std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
          break;
        }
        case 's': {  // SETITEM
          auto v = pop(at);
          auto k = pop(at);
          std::vector<value_ptr> pair{std::move(k), std::move(v)};
          add_pairs(at, *top(at), pair);
          break;
        }
        case 'u': {  // SETITEMS
          auto items = take_to_mark(at);
          add_pairs(at, *top(at), items);
          break;
        }
        case 'h': push(memo_get(at, byte())); break;                         // BINGET
        case 'j': push(memo_get(at, fixed<std::uint32_t>(4))); break;        // LONG_BINGET
        case 'q': memo_[byte()] = top(at); break;                            // BINPUT
        case 'r': memo_[fixed<std::uint32_t>(4)] = top(at); break;           // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = top(at); break;                     // MEMOIZE
        case 'c': case 0x93: case 'i': case 'R': case 'b': case 'o': case 0x81: case 0x92:
        case 'P': case 'Q': case 0x82: case 0x83: case 0x84: case 0x96: case 0x97: case 0x98:
          fail(at, std::string("refused opcode '") + opcode_name(op) +
                       "': this reader only accepts plain data and never imports or calls anything");
        default:
          fail(at, "unknown or unsupported pickle opcode 0x" + hex(op));
      }
    }
  }

 private:
  [[noreturn]] void fail(std::size_t at, std::string const& what) const
  {
    throw input_error(name_ + ": byte " + std::to_string(at) + ": " + what);
  }

  std::uint8_t byte()
  {
    if (pos_ >= data_.size()) fail(pos_, "truncated: expected more bytes");
    return data_[pos_++];
  }

  template <class T>
  T fixed(std::size_t n)  // little-endian
  {
    if (data_.size() - pos_ < n) fail(pos_, "truncated: expected " + std::to_string(n) + " more bytes");
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < n; ++i) x |= std::uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += n;
    return static_cast<T>(x);
  }

  std::span<std::uint8_t const> chunk(std::size_t at, std::uint64_t n)
  {
    if (n > data_.size() - pos_)
      fail(at, "length " + std::to_string(n) + " runs past the end of the file (" +
                   std::to_string(data_.size() - pos_) + " bytes left)");
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  std::string text(std::size_t at, std::uint64_t n)
  {
    auto s = chunk(at, n);
    return {reinterpret_cast<char const*>(s.data()), s.size()};
  }
  std::vector<std::uint8_t> raw(std::size_t at, std::uint64_t n)
  {
    auto s = chunk(at, n);
    return {s.begin(), s.end()};
  }

  // Two's-complement little-endian integer of n bytes: an int64 where it fits, else its bytes.
  value_ptr long_bytes(std::size_t at, std::uint64_t n)
  {
    auto s = chunk(at, n);
    if (fits_64_bits(s)) return make(small_long(s));
    return make(big_integer{{s.begin(), s.end()}});
  }

  static bool fits_64_bits(std::span<std::uint8_t const> s)
  {
    std::size_t const n = s.size();
    if (n <= 8) return true;
    // Bytes past the eighth must all repeat the sign of the eighth.
    std::uint8_t const sign = s[7] & 0x80 ? 0xff : 0x00;
    for (std::size_t i = 8; i < n; ++i)
      if (s[i] != sign) return false;
    return true;
  }

  static std::int64_t small_long(std::span<std::uint8_t const> s)
  {
    std::size_t const n = s.size();
    if (n == 0) return 0;
    std::uint64_t x = 0;
    std::size_t const used = n < 8 ? n : 8;
    for (std::size_t i = 0; i < used; ++i) x |= std::uint64_t{s[i]} << (8 * i);
    bool const negative = s[n - 1] & 0x80;
    if (n < 8 && negative) x |= ~std::uint64_t{0} << (8 * n);
    return static_cast<std::int64_t>(x);
  }

  template <class T>
  static value_ptr make(T x)
  {
    auto v = std::make_shared<value>();
    v->v = std::move(x);
    return v;
  }
  static value_ptr make_tuple(std::vector<value_ptr> items)
  {
    auto v = make(list_value{std::move(items)});
    v->is_tuple = true;
    return v;
  }

  void push(value_ptr v)
  {
    if (stack_.size() > 10'000'000) fail(pos_, "stack deeper than 10^7");
    stack_.push_back(std::move(v));
  }

  value_ptr const& top(std::size_t at) const
  {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(at, "stack underflow");
    return stack_.back();
  }

  value_ptr pop(std::size_t at)
  {
    value_ptr v = top(at);
    stack_.pop_back();
    return v;
  }

  void pop_mark(std::size_t at)
  {
    if (marks_.empty()) fail(at, "POP_MARK without a MARK");
    stack_.resize(marks_.back());
    marks_.pop_back();
  }

  std::vector<value_ptr> take(std::size_t at, std::size_t n)
  {
    std::size_t const floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) fail(at, "stack underflow");
    std::vector<value_ptr> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return items;
  }

  std::vector<value_ptr> take_to_mark(std::size_t at)
  {
    if (marks_.empty()) fail(at, "expected a MARK before this opcode");
    std::size_t const mark = marks_.back();
    marks_.pop_back();
    std::vector<value_ptr> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }

  list_value& list_of(std::size_t at, value_ptr const& v)
  {
    auto* l = std::get_if<list_value>(&v->v);
    if (l == nullptr || v->is_tuple) fail(at, "appending to something that is not a list");
    return *l;
  }

  // Plain data has no reference cycles, but the memo can build one (a list appended to
  // itself, or to a list inside it). Refused: shared ownership would leak it, and any walk
  // over the value would never end. One depth-first search over every container still alive
  // (coloured: on the path, or done), linear in the values and references, where a search on
  // every insertion was quadratic in a deeply nested input.
  void refuse_cycles(std::size_t at) const
  {
    enum class mark : std::uint8_t { on_path, done };
    std::unordered_map<value const*, mark> marks;
    marks.reserve(containers_.size());
    struct frame {
      value const* v;
      std::size_t next;  // index of the next child to visit (dict: 2 per item)
    };
    std::vector<frame> path;
    auto child = [](value const& v, std::size_t i) -> value const* {
      if (auto const* l = std::get_if<list_value>(&v.v)) return i < l->items.size() ? l->items[i].get() : nullptr;
      if (auto const* d = std::get_if<dict_value>(&v.v))
        return i < 2 * d->items.size() ? (i % 2 == 0 ? d->items[i / 2].first : d->items[i / 2].second).get() : nullptr;
      return nullptr;
    };
    auto is_container = [](value const* v) { return v->is_list() || v->is_dict(); };
    for (auto const& weak : containers_) {
      auto const root = weak.lock();
      if (!root || marks.contains(root.get())) continue;
      marks.emplace(root.get(), mark::on_path);
      path.push_back({root.get(), 0});
      while (!path.empty()) {
        frame& f = path.back();
        value const* c = child(*f.v, f.next++);
        if (c == nullptr) {
          marks[f.v] = mark::done;
          path.pop_back();
          continue;
        }
        if (!is_container(c)) continue;
        auto const [it, fresh] = marks.try_emplace(c, mark::on_path);
        if (!fresh) {
          if (it->second == mark::on_path)
            fail(at, "a container contains itself (plain data has no reference cycles)");
          continue;
        }
        path.push_back({c, 0});
      }
    }
  }

  void add_pairs(std::size_t at, value& target, std::vector<value_ptr>& items)
  {
    auto* d = std::get_if<dict_value>(&target.v);
    if (d == nullptr) fail(at, "setting an item on something that is not a dict");
    if (items.size() % 2 != 0) fail(at, "odd number of items for a dict");
    for (std::size_t i = 0; i < items.size(); i += 2) set_item(*d, std::move(items[i]), std::move(items[i + 1]));
  }

  // A list or dict, remembered so that the cycle check and the clean-up of a refused input
  // can reach it however it was referenced.
  template <class T>
  value_ptr container(T x)
  {
    value_ptr v = make(std::move(x));
    containers_.push_back(v);
    return v;
  }

  value_ptr memo_get(std::size_t at, std::uint64_t key)
  {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail(at, "memo key " + std::to_string(key) + " was never stored");
    return it->second;
  }

  static std::string hex(std::uint8_t b)
  {
    char const* digits = "0123456789abcdef";
    return {digits[b >> 4], digits[b & 15]};
  }

  static char const* opcode_name(std::uint8_t op)
  {
    switch (op) {
      case 'c': return "GLOBAL";
      case 0x93: return "STACK_GLOBAL";
      case 'i': return "INST";
      case 'R': return "REDUCE";
      case 'b': return "BUILD";
      case 'o': return "OBJ";
      case 0x81: return "NEWOBJ";
      case 0x92: return "NEWOBJ_EX";
      case 'P': return "PERSID";
      case 'Q': return "BINPERSID";
      case 0x82: return "EXT1";
      case 0x83: return "EXT2";
      case 0x84: return "EXT4";
      case 0x96: return "BYTEARRAY8";
      case 0x97: return "NEXT_BUFFER";
      case 0x98: return "READONLY_BUFFER";
    }
    return "?";
  }

  std::span<std::uint8_t const> data_;
  std::string const& name_;
  std::size_t pos_ = 0;
  std::vector<value_ptr> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, value_ptr> memo_;
  std::vector<std::weak_ptr<value>> containers_;
  bool accepted_ = false;
};

}  // namespace

value_ptr parse(std::span<std::uint8_t const> data, std::string const& name) { return machine(data, name).run(); }

value_ptr parse_file(std::string const& path)
{
  std::ifstream in = open_input(path, "a pickle file", std::ios::binary);
  std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse(data, path);
}

}  // namespace fraglab::pickle
