// The plain data a pickle may hold when fraglab reads it: None, bool, int, float, str,
// bytes, list, tuple, dict (and set). Nothing that names or calls Python code exists here.
//
// Two properties make any input safe to hold: an integer of any size is kept (as its bytes
// when it does not fit in 64 bits: a stack frame's line number of 2^64-1 must not make a
// snapshot unreadable; only a field that is used needs to fit), and a value is torn down
// without recursion, so a list nested 200,000 deep costs no stack.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace fraglab::pickle {

struct value;
using value_ptr = std::shared_ptr<value>;  // shared: the memo lets one object appear twice

struct list_value {
  std::vector<value_ptr> items;
  // Items an item_sink took as they were read (pickle_reader.hpp): counted, not kept; the
  // list's length is taken + items.size().
  std::uint64_t taken = 0;
};
// Keys as Python's dict compares them, for the scalar keys plain data uses (None, bool, int,
// float, str, bytes; True, 1 and 1.0 are one key); a tuple key is compared by identity.
struct dict_value {
  std::vector<std::pair<value_ptr, value_ptr>> items;  // in first-insertion order
  std::unordered_map<std::string, std::size_t> index;  // key -> position, once past small_dict
  static constexpr std::size_t small_dict = 8;
};
struct none_value {};
struct big_integer {
  std::vector<std::uint8_t> bytes;  // two's complement, little-endian, as LONG1/LONG4 store it
};

struct value {
  std::variant<none_value, bool, std::int64_t, double, std::string, std::vector<std::uint8_t>, list_value, dict_value,
               big_integer>
      v;
  bool is_tuple = false;  // list_value holding a tuple
  // The memo slot the reader last stored this value in, where it has one below 2^32 - 1: what
  // it forgets when a sink takes the value.
  std::uint32_t memo_slot = ~std::uint32_t{0};
  // Free for the reader of the data to mark a value it has already read (0: not), so that one
  // the pickle refers to many times through the memo is read once.
  mutable std::uint32_t reader_mark = 0;

  value() = default;
  value(value const&) = delete;
  value& operator=(value const&) = delete;
  ~value()
  {
    // Children whose last owner this is are unlinked first, a level at a time through one
    // worklist, so that none is destroyed with children of its own: no recursion.
    std::vector<value_ptr> pending;
    release_children(pending);
    while (!pending.empty()) {
      value_ptr child = std::move(pending.back());
      pending.pop_back();
      if (child.use_count() == 1) child->release_children(pending);
    }
  }

  // Moves the children out (breaking any cycle through this value).
  void release_children(std::vector<value_ptr>& to)
  {
    if (auto* l = std::get_if<list_value>(&v)) {
      for (auto& item : l->items) to.push_back(std::move(item));
      l->items.clear();
    } else if (auto* d = std::get_if<dict_value>(&v)) {
      for (auto& [k, item] : d->items) {
        to.push_back(std::move(k));
        to.push_back(std::move(item));
      }
      d->items.clear();
      d->index.clear();
    }
  }

  [[nodiscard]] bool is_none() const { return std::holds_alternative<none_value>(v); }
  [[nodiscard]] bool is_int() const { return std::holds_alternative<std::int64_t>(v); }
  [[nodiscard]] bool is_text() const { return std::holds_alternative<std::string>(v); }
  [[nodiscard]] bool is_list() const { return std::holds_alternative<list_value>(v); }
  [[nodiscard]] bool is_dict() const { return std::holds_alternative<dict_value>(v); }

  [[nodiscard]] std::int64_t as_int() const { return std::get<std::int64_t>(v); }
  [[nodiscard]] std::string const& as_text() const { return std::get<std::string>(v); }
  [[nodiscard]] std::vector<value_ptr> const& as_list() const { return std::get<list_value>(v).items; }

  // The value under a string key of a dict, or null when absent (or not a dict).
  [[nodiscard]] value const* get(std::string_view key) const
  {
    value_ptr const* v = get_shared(key);
    return v == nullptr ? nullptr : v->get();
  }
  // The same, as the dict holds it: for a reader that keeps it past the dict.
  [[nodiscard]] value_ptr const* get_shared(std::string_view key) const
  {
    auto const* d = std::get_if<dict_value>(&v);
    if (d == nullptr) return nullptr;
    if (!d->index.empty()) {
      auto const it = d->index.find(key_of_text(key));
      return it == d->index.end() ? nullptr : &d->items[it->second].second;
    }
    for (auto const& [k, val] : d->items)
      if (k->is_text() && k->as_text() == key) return &val;
    return nullptr;
  }

  // What identifies this value as a dict key (dict_value's comment says how keys compare).
  [[nodiscard]] std::string key() const
  {
    auto bytes_of = [](std::vector<std::uint8_t> const& b) {
      return std::string_view(reinterpret_cast<char const*>(b.data()), b.size());
    };
    if (is_text()) return key_of_text(as_text());
    if (is_int()) return tagged('i', std::to_string(as_int()));
    if (auto const* b = std::get_if<bool>(&v)) return *b ? "i1" : "i0";
    if (auto const* r = std::get_if<double>(&v)) {
      if (*r >= -9.2e18 && *r <= 9.2e18 && *r == static_cast<double>(static_cast<std::int64_t>(*r)))
        return tagged('i', std::to_string(static_cast<std::int64_t>(*r)));
      return tagged('f', std::to_string(std::bit_cast<std::uint64_t>(*r)));
    }
    if (is_none()) return "N";
    if (auto const* b = std::get_if<std::vector<std::uint8_t>>(&v)) return tagged('b', bytes_of(*b));
    if (auto const* b = std::get_if<big_integer>(&v)) return tagged('I', bytes_of(b->bytes));
    return tagged('p', std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  }
  static std::string key_of_text(std::string_view text) { return tagged('s', text); }
  static std::string tagged(char tag, std::string_view body)
  {
    std::string k;
    k.reserve(body.size() + 1);
    k += tag;
    k.append(body);
    return k;
  }
};

// d[k] = x as Python does it: a key already there keeps its place and takes the new value.
inline void set_item(dict_value& d, value_ptr k, value_ptr x)
{
  if (d.index.empty() && d.items.size() < dict_value::small_dict) {
    // Snapshots hold many small dicts of text keys: compared as text, without building keys.
    auto same = [&k](value const& old) {
      if (k.get() == &old) return true;  // a shared (interned) key
      return k->is_text() && old.is_text() ? k->as_text() == old.as_text() : k->key() == old.key();
    };
    for (auto& [old_k, old_x] : d.items)
      if (same(*old_k)) {
        old_x = std::move(x);
        return;
      }
    d.items.emplace_back(std::move(k), std::move(x));
    return;
  }
  if (d.index.empty())
    for (std::size_t i = 0; i < d.items.size(); ++i) d.index.emplace(d.items[i].first->key(), i);
  auto const [at, fresh] = d.index.try_emplace(k->key(), d.items.size());
  if (fresh) d.items.emplace_back(std::move(k), std::move(x));
  else d.items[at->second].second = std::move(x);
}

}  // namespace fraglab::pickle
