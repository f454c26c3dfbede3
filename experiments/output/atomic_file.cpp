#include "experiments/output/atomic_file.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace fraglab {

void check_output_file(std::string const& path)
{
  namespace fs = std::filesystem;
  if (path.empty()) throw std::invalid_argument("the file name is empty");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw std::invalid_argument(path + ": is a directory; expected a file name");
  fs::path const dir = fs::path(path).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw std::invalid_argument(path + ": " + dir.string() + (fs::exists(dir, ec) ? " is not a directory" : " does not exist"));
}

namespace {

std::string checked(std::string path)
{
  check_output_file(path);
  return path;
}

}  // namespace

atomic_file::atomic_file(std::string path)
    : path_(checked(std::move(path))), tmp_(path_ + ".tmp." + std::to_string(::getpid())),
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
