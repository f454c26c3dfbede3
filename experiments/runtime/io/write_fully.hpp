// Writing a whole buffer to a descriptor: write(2) may write less than asked, or be
// interrupted by a signal before writing anything, and both mean "go on".
#pragma once

#include <cerrno>
#include <cstddef>

#include <unistd.h>

namespace fraglab {

// 0 when all n bytes went out, else the errno (ENOSPC for a write that took nothing).
[[nodiscard]] inline int write_fully(int fd, void const* data, std::size_t n) noexcept
{
  auto const* at = static_cast<char const*>(data);
  while (n > 0) {
    ssize_t const w = ::write(fd, at, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : ENOSPC;
    at += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

}  // namespace fraglab
