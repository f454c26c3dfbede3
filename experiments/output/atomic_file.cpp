#include "experiments/output/atomic_file.hpp"

#include <cstdio>
#include <stdexcept>
#include <unistd.h>

namespace fraglab {

atomic_file::atomic_file(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())),
      out_(tmp_, std::ios::binary | std::ios::trunc)
{
  if (!out_) throw std::runtime_error(path_ + ": cannot open for writing");
}

atomic_file::~atomic_file()
{
  if (!committed_) {
    out_.close();
    std::remove(tmp_.c_str());
  }
}

void atomic_file::commit()
{
  out_.close();        // flushes; a failed write or flush leaves failbit set
  committed_ = true;   // from here on this function cleans up after itself
  if (out_.fail()) {
    std::remove(tmp_.c_str());
    throw std::runtime_error(path_ + ": write failed");
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    throw std::runtime_error(path_ + ": cannot rename the temporary file into place");
  }
}

void write_file_atomically(std::string const& path, std::string const& content)
{
  atomic_file f(path);
  f.stream() << content;
  f.commit();
}

}  // namespace fraglab
