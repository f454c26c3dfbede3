#include <fraglab/runtime/io/temporary_file.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace fraglab {

int unlinked_temporary_file()
{
  char const* env = std::getenv("TMPDIR");
  std::string const dir = env != nullptr && *env != '\0' ? env : "/tmp";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  // Without O_TMPFILE (some file systems): a unique name, exclusively created, unlinked at once.
  std::string name = dir + "/fraglab-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(dir + ": cannot create a temporary file: " + std::strerror(errno));
  ::unlink(name.c_str());
  return fd;
}

}  // namespace fraglab
