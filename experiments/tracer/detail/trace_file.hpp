// One process's trace file in the native binary format, written with write(2) from a
// fixed buffer. The header is rewritten (pwrite at offset 0) at every flush, so the file on
// disk is a complete, readable trace after each flush: a process that ends by exec, _exit
// or a fork's child exiting leaves a valid trace once the tracer has flushed it.
#pragma once

#include <fraglab/runtime/trace/detail/native_binary_layout.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace fraglab::tracer::detail {

namespace layout = fraglab::trace::detail;

class trace_file {
 public:
  static constexpr std::size_t path_capacity = 4096;

  // Creates DIR/NAME.PID.fbin, or NAME.PID.N.fbin when that exists (an exec keeps the pid).
  bool create(char const* dir, char const* name, long pid) noexcept
  {
    for (int n = 0; n < 1000; ++n) {
      int const written = n == 0 ? std::snprintf(path_, sizeof path_, "%s/%s.%ld.fbin", dir, name, pid)
                                 : std::snprintf(path_, sizeof path_, "%s/%s.%ld.%d.fbin", dir, name, pid, n);
      if (written < 0 || static_cast<std::size_t>(written) >= sizeof path_) return false;
      fd_ = ::open(path_, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd_ >= 0) break;
      if (errno != EEXIST) return false;
    }
    if (fd_ < 0) return false;
    header_ = {};
    header_.slots = 1;
    used_ = 0;
    unsigned char h[layout::binary_header_size];
    layout::encode_header(h, header_);
    return ::write(fd_, h, sizeof h) == static_cast<ssize_t>(sizeof h);  // records follow it
  }

  // Forgets the parent's file in a fork's child without touching it.
  void detach() noexcept
  {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    used_ = 0;
  }

  bool is_open() const noexcept { return fd_ >= 0; }
  char const* path() const noexcept { return path_; }

  bool allocation(std::uint32_t slot, std::uint64_t size, unsigned log2_alignment) noexcept
  {
    if (!room()) return false;
    used_ = static_cast<std::size_t>(
        layout::encode_allocation(buffer_ + used_, slot, size, std::uint64_t{1} << log2_alignment, 0) - buffer_);
    ++header_.allocs;
    ++header_.events;
    if (slot >= header_.slots) header_.slots = slot + 1u;
    return true;
  }

  bool free(std::uint32_t slot) noexcept
  {
    if (!room()) return false;
    used_ = static_cast<std::size_t>(layout::encode_free(buffer_ + used_, slot) - buffer_);
    ++header_.frees;
    ++header_.events;
    return true;
  }

  void failure() noexcept { ++header_.recorded_failures; }

  // Writes the buffered records, then the header that counts them.
  bool flush() noexcept
  {
    if (fd_ < 0) return false;
    for (std::size_t done = 0; done < used_;) {
      ssize_t const n = ::write(fd_, buffer_ + done, used_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    used_ = 0;
    return write_header();
  }

 private:
  bool room() noexcept { return used_ + layout::longest_record <= sizeof buffer_ || flush(); }

  bool write_header() noexcept
  {
    unsigned char h[layout::binary_header_size];
    layout::encode_header(h, header_);
    return ::pwrite(fd_, h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  }

  int fd_ = -1;
  char path_[path_capacity] = {};
  layout::binary_header header_;
  unsigned char buffer_[1 << 20];
  std::size_t used_ = 0;
};

}  // namespace fraglab::tracer::detail
