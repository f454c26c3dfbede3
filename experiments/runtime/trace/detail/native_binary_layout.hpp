// The byte layout of the native binary format (native_binary.hpp documents it), as
// allocation-free inline functions: the reader and writer use them, and so does the
// malloc tracer, which must not call malloc while it records.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace fraglab::trace::detail {

inline constexpr std::string_view binary_magic{"FLTRACE\0", 8};
inline constexpr std::uint16_t binary_version = 1;
inline constexpr std::size_t binary_header_size = 64;
inline constexpr std::uint8_t tag_free = 0x01, tag_alignment = 0x02, tag_stream = 0x04, tag_release = 0x08;
inline constexpr std::size_t longest_record = 1 + 10 + 10 + 1 + 10;

struct binary_header {
  std::uint64_t events = 0, allocs = 0, frees = 0, slots = 0, recorded_failures = 0;
};

template <class T>
T load_le(unsigned char const* p) noexcept
{
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

template <class T>
void store_le(unsigned char* p, T v) noexcept
{
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

inline void encode_header(unsigned char (&h)[binary_header_size], binary_header const& f) noexcept
{
  std::memset(h, 0, binary_header_size);
  std::memcpy(h, binary_magic.data(), binary_magic.size());
  store_le<std::uint16_t>(h + 8, binary_version);
  store_le<std::uint16_t>(h + 10, binary_header_size);
  store_le<std::uint64_t>(h + 16, f.events);
  store_le<std::uint64_t>(h + 24, f.allocs);
  store_le<std::uint64_t>(h + 32, f.frees);
  store_le<std::uint64_t>(h + 40, f.slots);
  store_le<std::uint64_t>(h + 48, f.recorded_failures);
}

inline unsigned char* put_varint(unsigned char* out, std::uint64_t v) noexcept
{
  while (v >= 0x80) {
    *out++ = static_cast<unsigned char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<unsigned char>(v);
  return out;
}

// Writes one record at `out` (at least longest_record bytes) and returns its end.
inline unsigned char* encode_allocation(unsigned char* out, std::uint64_t slot, std::uint64_t size,
                                        std::uint64_t alignment, std::uint64_t stream) noexcept
{
  bool const aligned = alignment > 1, streamed = stream != 0;
  *out++ = static_cast<unsigned char>((aligned ? tag_alignment : 0) | (streamed ? tag_stream : 0));
  out = put_varint(out, slot);
  out = put_varint(out, size);
  if (aligned) *out++ = static_cast<unsigned char>(std::countr_zero(alignment));
  if (streamed) out = put_varint(out, stream);
  return out;
}

inline unsigned char* encode_free(unsigned char* out, std::uint64_t slot) noexcept
{
  *out++ = tag_free;
  return put_varint(out, slot);
}

}  // namespace fraglab::trace::detail
