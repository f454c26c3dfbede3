#include <fraglab/runtime/pickle/pickle_reader.hpp>

#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string_view>
#include <unordered_map>
#include <memory>
#include <vector>

namespace fraglab::pickle {
namespace {

// The pickle's bytes: a span held by the caller, or a file read a buffer at a time (its size
// known up front, so that a declared length is checked against what remains before anything
// is allocated for it).
class byte_source {
 public:
  explicit byte_source(std::span<std::uint8_t const> data) : window_(data), size_(data.size()) {}
  byte_source(std::istream& in, std::uint64_t size) : in_(&in), buffer_(buffer_size), size_(size) { refill(1); }

  [[nodiscard]] std::uint64_t offset() const noexcept { return base_ + cur_; }
  [[nodiscard]] std::uint64_t left() const noexcept { return size_ - offset(); }
  [[nodiscard]] bool empty_input() const noexcept { return size_ == 0; }

  // Makes n bytes (n <= buffer_size) readable at the cursor; false where the input ends first.
  bool have(std::size_t n)
  {
    if (window_.size() - cur_ >= n) return true;
    return in_ != nullptr && refill(n);
  }
  std::uint8_t next() noexcept { return window_[cur_++]; }
  [[nodiscard]] std::uint8_t const* here() const noexcept { return window_.data() + cur_; }
  void skip(std::size_t n) noexcept { cur_ += n; }

  // Appends the next n bytes (n <= left()) to `out`, however many buffers they span.
  template <class Bytes>
  void copy(Bytes& out, std::uint64_t n)
  {
    out.reserve(out.size() + n);
    while (n > 0) {
      if (cur_ == window_.size()) refill(1);
      std::size_t const part = static_cast<std::size_t>(std::min<std::uint64_t>(n, window_.size() - cur_));
      out.insert(out.end(), window_.data() + cur_, window_.data() + cur_ + part);
      cur_ += part;
      n -= part;
    }
  }

 private:
  static constexpr std::size_t buffer_size = 1 << 20;

  // Keeps the unread bytes, reads on behind them until there are n or the input ends.
  bool refill(std::size_t n)
  {
    std::size_t const kept = window_.size() - cur_;
    // The first refill has no window yet; memmove's pointers must be valid even for 0 bytes.
    if (kept > 0) std::memmove(buffer_.data(), window_.data() + cur_, kept);
    base_ += cur_;
    cur_ = 0;
    std::size_t filled = kept;
    while (filled < n || filled == kept) {
      in_->read(reinterpret_cast<char*>(buffer_.data() + filled), static_cast<std::streamsize>(buffer_.size() - filled));
      auto const got = static_cast<std::size_t>(in_->gcount());
      filled += got;
      if (got == 0) break;
    }
    window_ = {buffer_.data(), filled};
    return filled >= n;
  }

  std::istream* in_ = nullptr;
  std::vector<std::uint8_t> buffer_;
  std::span<std::uint8_t const> window_;
  std::size_t cur_ = 0;     // in window_
  std::uint64_t base_ = 0;  // the offset of window_[0]
  std::uint64_t size_;
};

class machine {
 public:
  machine(byte_source& in, std::string const& name, item_sink* sink) : in_(in), name_(name), sink_(sink) {}
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
    if (in_.empty_input()) fail(0, "empty file: expected a pickle");
    for (;;) {
      std::uint64_t const at = in_.offset();
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
        case '(': marks_.push_back({stack_.size(), 0}); break;  // MARK
        case '0': pop(at); break;                          // POP
        case '1': pop_mark(at); break;                     // POP_MARK
        case '2': push(top(at)); break;                    // DUP
        case 'N': push(make(none_value{})); break;
        case 0x88: push(make(true)); break;   // NEWTRUE
        case 0x89: push(make(false)); break;  // NEWFALSE
        case 'J': push(make(static_cast<std::int64_t>(fixed<std::int32_t>(4)))); break;  // BININT
        case 'K': push(small_int(byte())); break;                                        // BININT1
        case 'M': push(make(static_cast<std::int64_t>(fixed<std::uint16_t>(2)))); break; // BININT2
        case 0x8a: push(long_bytes(at, byte())); break;                                  // LONG1
        case 0x8b: push(long_bytes(at, fixed<std::uint32_t>(4))); break;                 // LONG4
        case 'G': {  // BINFLOAT: big-endian double
          std::uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = bits << 8 | byte();
          push(make(std::bit_cast<double>(bits)));
          break;
        }
        case 0x8c: push(text_value(at, byte())); break;                   // SHORT_BINUNICODE
        case 'X': push(text_value(at, fixed<std::uint32_t>(4))); break;   // BINUNICODE
        case 0x8d: push(text_value(at, fixed<std::uint64_t>(8))); break;  // BINUNICODE8
        case 'U': push(text_value(at, byte())); break;                   // SHORT_BINSTRING
        case 'T': push(text_value(at, fixed<std::uint32_t>(4))); break;  // BINSTRING
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
        case 'l': push(container(list_value{take_to_mark(at), 0})); break;  // LIST
        case 'd': {                                                      // DICT
          auto items = take_to_mark(at);
          auto d = container(dict_value{});
          add_pairs(at, *d, items);
          push(d);
          offer_top();
          break;
        }
        case 'a': append(at); break;   // APPEND
        case 'e': appends(at); break;  // APPENDS
        case 0x90: {                   // ADDITEMS
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
          offer_top();
          break;
        }
        case 'h': push(memo_get(at, byte())); break;                   // BINGET
        case 'j': push(memo_get(at, fixed<std::uint32_t>(4))); break;  // LONG_BINGET
        case 'q': memo_put(at, byte()); break;                         // BINPUT
        case 'r': memo_put(at, fixed<std::uint32_t>(4)); break;        // LONG_BINPUT
        case 0x94: memo_put(at, memo_size_); break;                    // MEMOIZE
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
  [[noreturn]] void fail(std::uint64_t at, std::string const& what) const
  {
    throw input_error(name_ + ": byte " + std::to_string(at) + ": " + what);
  }

  std::uint8_t byte()
  {
    if (!in_.have(1)) fail(in_.offset(), "truncated: expected more bytes");
    return in_.next();
  }

  template <class T>
  T fixed(std::size_t n)  // little-endian, n <= 8
  {
    if (!in_.have(n)) fail(in_.offset(), "truncated: expected " + std::to_string(n) + " more bytes");
    std::uint64_t x = 0;
    std::uint8_t const* b = in_.here();
    for (std::size_t i = 0; i < n; ++i) x |= std::uint64_t{b[i]} << (8 * i);
    in_.skip(n);
    return static_cast<T>(x);
  }

  // n bytes into `out`, once they are known to be there.
  template <class Bytes>
  Bytes chunk(std::uint64_t at, std::uint64_t n)
  {
    if (n > in_.left())
      fail(at, "length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(in_.left()) + " bytes left)");
    Bytes out;
    in_.copy(out, n);
    return out;
  }

  std::string text(std::uint64_t at, std::uint64_t n) { return chunk<std::string>(at, n); }

  // Scalars are immutable, so the short texts and small integers that recur in every entry
  // (a snapshot's keys, 'alloc', stream 0) are made once and shared: most of a large file's
  // values would otherwise be allocated and freed once per entry.
  value_ptr text_value(std::uint64_t at, std::uint64_t n)
  {
    if (n > 24 || !in_.have(static_cast<std::size_t>(n))) return make(text(at, n));
    std::string_view const s(reinterpret_cast<char const*>(in_.here()), static_cast<std::size_t>(n));
    if (auto it = texts_.find(s); it != texts_.end()) {
      in_.skip(s.size());
      return it->second;
    }
    value_ptr v = make(text(at, n));
    if (texts_.size() < 1 << 16) texts_.emplace(v->as_text(), v);
    return v;
  }
  value_ptr small_int(std::uint8_t n)
  {
    value_ptr& v = small_ints_[n];
    if (v == nullptr) v = make(std::int64_t{n});
    return v;
  }
  std::vector<std::uint8_t> raw(std::uint64_t at, std::uint64_t n) { return chunk<std::vector<std::uint8_t>>(at, n); }

  // Two's-complement little-endian integer of n bytes: an int64 where it fits, else its bytes.
  value_ptr long_bytes(std::uint64_t at, std::uint64_t n)
  {
    auto const s = raw(at, n);
    if (fits_64_bits(s)) return make(small_long(s));
    return make(big_integer{s});
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
    auto v = make(list_value{std::move(items), 0});
    v->is_tuple = true;
    return v;
  }

  void push(value_ptr v)
  {
    if (stack_.size() > 10'000'000) fail(in_.offset(), "stack deeper than 10^7");
    stack_.push_back(std::move(v));
  }

  [[nodiscard]] std::size_t floor() const noexcept { return marks_.empty() ? 0 : marks_.back().at; }

  value_ptr const& top(std::uint64_t at) const
  {
    if (stack_.size() <= floor()) fail(at, "stack underflow");
    return stack_.back();
  }

  value_ptr pop(std::uint64_t at)
  {
    value_ptr v = top(at);
    stack_.pop_back();
    return v;
  }

  void pop_mark(std::uint64_t at)
  {
    if (marks_.empty()) fail(at, "POP_MARK without a MARK");
    refuse_taken_items(at, "discarded");
    stack_.resize(marks_.back().at);
    marks_.pop_back();
  }

  std::vector<value_ptr> take(std::uint64_t at, std::size_t n)
  {
    if (stack_.size() < floor() + n) fail(at, "stack underflow");
    std::vector<value_ptr> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return items;
  }

  // The items above the innermost MARK, for anything but APPENDS: none may have been taken.
  std::vector<value_ptr> take_to_mark(std::uint64_t at)
  {
    if (marks_.empty()) fail(at, "expected a MARK before this opcode");
    refuse_taken_items(at, "put in something other than a list");
    return items_to_mark().first;
  }

  std::pair<std::vector<value_ptr>, std::uint64_t> items_to_mark()
  {
    auto const [mark, taken] = marks_.back();
    marks_.pop_back();
    std::vector<value_ptr> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return {std::move(items), taken};
  }

  void refuse_taken_items(std::uint64_t at, char const* how) const
  {
    if (marks_.back().taken != 0)
      fail(at, std::string("an entry already read as a list's item is ") + how +
                   " (the file is not laid out as Python's pickler writes a list)");
  }

  list_value& list_of(std::uint64_t at, value_ptr const& v)
  {
    auto* l = std::get_if<list_value>(&v->v);
    if (l == nullptr || v->is_tuple) fail(at, "appending to something that is not a list");
    return *l;
  }

  void append(std::uint64_t at)
  {
    value_ptr item = pop(at);
    value_ptr const& target = top(at);
    list_value& l = list_of(at, target);
    if (!offer(item, *target, l.taken + l.items.size())) l.items.push_back(std::move(item));
    else ++l.taken;
  }

  // The items above the MARK join the list below it: those a sink took at their SETITEMS
  // first (they were the first items of the batch), then each of the rest, offered as it goes.
  void appends(std::uint64_t at)
  {
    if (marks_.empty()) fail(at, "expected a MARK before this opcode");
    auto [items, taken] = items_to_mark();
    value_ptr const& target = top(at);
    list_value& l = list_of(at, target);
    l.taken += taken;
    l.items.reserve(l.items.size() + items.size());
    for (auto& item : items)
      if (offer(item, *target, l.taken + l.items.size())) ++l.taken;
      else l.items.push_back(std::move(item));
  }

  // A dict just completed at the top: taken at once where it is the first item above a MARK
  // whose owner (the value below it) is a list. Nothing but APPENDS can then move it
  // (APPEND and POP cannot reach below a MARK, and every other use of the batch refuses
  // a taken item), so its place is known now: the list's length plus what the batch took.
  void offer_top()
  {
    if (sink_ == nullptr || marks_.empty()) return;
    auto& [mark, taken] = marks_.back();
    if (mark == 0 || stack_.size() != mark + 1) return;
    value_ptr const& owner = stack_[mark - 1];
    auto const* l = std::get_if<list_value>(&owner->v);
    if (l == nullptr || owner->is_tuple) return;
    if (!stack_.back()->is_dict() || !offer(stack_.back(), *owner, l->taken + l->items.size() + taken, true)) return;
    stack_.pop_back();
    ++taken;
  }

  // Gives `item` to the sink; true when it took it and nothing else refers to it (but its
  // own memo slot, then forgotten): the list then only counts it.
  // Early (at SETITEMS), only an item it can release: any other is offered when appended.
  bool offer(value_ptr& item, value const& list, std::uint64_t index, bool early = false)
  {
    if (sink_ == nullptr) return false;
    bool const memoized = item->memo_slot < memo_.size() && memo_[item->memo_slot] == item;
    bool const exclusive = item.use_count() == (memoized ? 2 : 1);
    if ((early && !exclusive) || !sink_->take(*item, list, index, exclusive) || !exclusive) return false;
    if (memoized) memo_[item->memo_slot] = released();
    item.reset();
    return true;
  }

  // What the memo holds where a taken entry was.
  static value_ptr const& released()
  {
    static value_ptr const r = std::make_shared<value>();
    return r;
  }

  void memo_put(std::uint64_t at, std::uint64_t key)
  {
    value_ptr const& v = top(at);
    if (key < memo_.size()) {
      memo_[key] = v;
    } else if (key == memo_.size() && key < std::uint64_t{1} << 32) {
      memo_.push_back(v);
    } else {
      sparse_memo_[key] = v;
      memo_size_ = memo_.size() + sparse_memo_.size();
      return;
    }
    memo_size_ = memo_.size() + sparse_memo_.size();
    if (key < ~std::uint32_t{0}) v->memo_slot = static_cast<std::uint32_t>(key);
  }

  value_ptr memo_get(std::uint64_t at, std::uint64_t key)
  {
    value_ptr const* v = nullptr;
    if (key < memo_.size()) v = &memo_[key];
    else if (auto it = sparse_memo_.find(key); it != sparse_memo_.end()) v = &it->second;
    if (v == nullptr || *v == nullptr) fail(at, "memo key " + std::to_string(key) + " was never stored");
    if (*v == released()) fail(at, "memo key " + std::to_string(key) + " is an entry already read as a list's item");
    return *v;
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

  void add_pairs(std::uint64_t at, value& target, std::vector<value_ptr>& items)
  {
    auto* d = std::get_if<dict_value>(&target.v);
    if (d == nullptr) fail(at, "setting an item on something that is not a dict");
    if (items.size() % 2 != 0) fail(at, "odd number of items for a dict");
    for (std::size_t i = 0; i < items.size(); i += 2) set_item(*d, std::move(items[i]), std::move(items[i + 1]));
  }

  // A list or dict, remembered so that the cycle check and the clean-up of a refused input
  // can reach it however it was referenced. The forgotten ones (a sink's entries) are swept
  // out as the list doubles, so that it grows with what is alive.
  template <class T>
  value_ptr container(T x)
  {
    value_ptr v = make(std::move(x));
    if (containers_.size() == containers_.capacity() && containers_.size() >= 1024) {
      std::erase_if(containers_, [](std::weak_ptr<value> const& w) { return w.expired(); });
      containers_.reserve(2 * containers_.size() + 1024);
    }
    containers_.push_back(v);
    return v;
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

  struct mark {
    std::size_t at;          // the stack's size at the MARK
    std::uint64_t taken = 0;  // items a sink took above it, no longer on the stack
  };
  byte_source& in_;
  std::string const& name_;
  item_sink* sink_;
  std::vector<value_ptr> stack_;
  std::vector<mark> marks_;
  // The memo: keys as the pickler numbers them (0, 1, 2, ...) in a vector, any others apart.
  std::vector<value_ptr> memo_;
  std::unordered_map<std::uint64_t, value_ptr> sparse_memo_;
  std::uint64_t memo_size_ = 0;  // MEMOIZE's next key
  std::vector<std::weak_ptr<value>> containers_;
  std::unordered_map<std::string_view, value_ptr> texts_;  // keys view the values' own text
  std::array<value_ptr, 256> small_ints_;
  bool accepted_ = false;
};

}  // namespace

value_ptr parse(std::span<std::uint8_t const> data, std::string const& name, item_sink* sink)
{
  byte_source in(data);
  return machine(in, name, sink).run();
}

value_ptr parse_file(std::string const& path, item_sink* sink)
{
  std::ifstream file = open_input(path, "a pickle file", std::ios::binary);
  file.seekg(0, std::ios::end);
  auto const size = static_cast<std::uint64_t>(file.tellg());
  file.seekg(0);
  byte_source in(file, size);
  return machine(in, path, sink).run();
}

}  // namespace fraglab::pickle
