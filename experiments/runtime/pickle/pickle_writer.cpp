#include <fraglab/runtime/pickle/pickle_writer.hpp>

#include <bit>
#include <cstring>
#include <stdexcept>

namespace fraglab::pickle {
namespace {

// The opcodes of pickletools' table that plain data needs.
constexpr char proto = '\x80', stop = '.', mark = '(', none_op = 'N', newtrue = '\x88', newfalse = '\x89', binint = 'J',
               long1 = '\x8a', binfloat = 'G', short_binunicode = '\x8c', binunicode = 'X', empty_list = ']', appends = 'e',
               empty_dict = '}', setitems = 'u';

void little_endian(std::string& out, std::uint64_t v, int bytes)
{
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

writer::writer()
{
  out_ += proto;
  out_ += '\x04';
}

writer::writer(std::ostream& sink) : writer()
{
  sink_ = &sink;
}

void writer::item()
{
  if (!open_.empty()) ++open_.back().items;
  constexpr std::size_t spill_bytes = std::size_t{1} << 20;
  if (sink_ != nullptr && out_.size() >= spill_bytes) {
    sink_->write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out_.clear();
  }
}

void writer::none()
{
  out_ += none_op;
  item();
}

void writer::boolean(bool b)
{
  out_ += b ? newtrue : newfalse;
  item();
}

void writer::integer(std::int64_t n)
{
  if (n >= INT32_MIN && n <= INT32_MAX) {
    out_ += binint;
    little_endian(out_, static_cast<std::uint32_t>(static_cast<std::int32_t>(n)), 4);
  } else {  // LONG1: the fewest two's-complement bytes, little-endian
    auto const u = static_cast<std::uint64_t>(n);
    int bytes = 8;
    while (bytes > 1) {
      std::uint64_t const top = (u >> (8 * (bytes - 1))) & 0xff;
      bool const next_sign = ((u >> (8 * (bytes - 2))) & 0x80) != 0;
      if ((top == 0 && !next_sign) || (top == 0xff && next_sign)) --bytes;
      else break;
    }
    out_ += long1;
    out_ += static_cast<char>(bytes);
    little_endian(out_, u, bytes);
  }
  item();
}

void writer::real(double d)
{
  out_ += binfloat;
  auto const bits = std::bit_cast<std::uint64_t>(d);
  for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);  // big-endian
  item();
}

void writer::text(std::string_view s)
{
  if (s.size() < 256) {
    out_ += short_binunicode;
    out_ += static_cast<char>(s.size());
  } else {
    out_ += binunicode;
    little_endian(out_, s.size(), 4);
  }
  out_.append(s);
  item();
}

void writer::begin_list()
{
  out_ += empty_list;
  out_ += mark;
  open_.push_back({false, 0});
}

void writer::end_list()
{
  if (open_.empty() || open_.back().dict) throw std::logic_error("pickle writer: end_list without its list");
  open_.pop_back();
  out_ += appends;
  item();
}

void writer::begin_dict()
{
  out_ += empty_dict;
  out_ += mark;
  open_.push_back({true, 0});
}

void writer::end_dict()
{
  if (open_.empty() || !open_.back().dict) throw std::logic_error("pickle writer: end_dict without its dict");
  if (open_.back().items % 2 != 0) throw std::logic_error("pickle writer: a dict key without its value");
  open_.pop_back();
  out_ += setitems;
  item();
}

void writer::entry(std::string_view key, std::int64_t n)
{
  text(key);
  integer(n);
}

void writer::entry(std::string_view key, std::string_view s)
{
  text(key);
  text(s);
}

std::string writer::finish()
{
  if (!open_.empty()) throw std::logic_error("pickle writer: a container is still open");
  out_ += stop;
  if (sink_ == nullptr) return std::move(out_);
  sink_->write(out_.data(), static_cast<std::streamsize>(out_.size()));
  out_.clear();
  return {};
}

}  // namespace fraglab::pickle
