// A file that appears whole or not at all: written to PATH.tmp.PID and renamed over PATH
// by commit(). Destroyed without commit() (an error part-way), it removes the temporary
// file, so a failed command never leaves a half-written output behind.
#pragma once

#include <fstream>
#include <string>

namespace fraglab {

// Throws std::invalid_argument, naming `path`, where no file could be written there: an
// empty name, an existing directory, or a directory that does not exist. Commands call it
// on their output files before any work, so that an hour's replay does not end in "cannot
// rename"; atomic_file calls it too.
void check_output_file(std::string const& path);

class atomic_file {
 public:
  // Throws std::invalid_argument where check_output_file does, std::runtime_error when the
  // temporary file cannot be created.
  explicit atomic_file(std::string path);
  atomic_file(atomic_file const&) = delete;
  atomic_file& operator=(atomic_file const&) = delete;
  ~atomic_file();

  // Seekable, so that a writer may patch a header once it knows the counts.
  std::ofstream& stream() noexcept { return out_; }

  // Flushes and renames into place. Throws std::runtime_error (and removes the temporary
  // file) when a write failed or the rename does.
  void commit();

 private:
  std::string path_;
  std::string tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Writes `content` to `path` through an atomic_file.
void write_file_atomically(std::string const& path, std::string const& content);

}  // namespace fraglab
