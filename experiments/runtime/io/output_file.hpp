// Where a command's output goes, and the guarantee it keeps: the target is changed only by
// a run that succeeded, and only in the way its kind of file expects.
//
// | the target                       | how it is written                                      |
// |----------------------------------|--------------------------------------------------------|
// | `-`                              | standard output                                        |
// | a character device, FIFO, socket | written through (`/dev/null`, `/dev/stdout`, a pipe)   |
// | a symbolic link                  | its final target, by the rules here; the link stays    |
// | a regular file with hard links   | rewritten in place, so that every link sees the result |
// | a regular file, or a new name    | a temporary beside it, renamed over it on commit; the  |
// |                                  | file's mode (and owner, where allowed) carried over    |
//
// Everything is first written to a temporary file (created exclusively, with a random name),
// so the target sees nothing of a failed run and a writer may seek back to patch a header.
// A temporary beside the target is removed when the process is ended by SIGINT, SIGTERM or
// SIGHUP; the others are unlinked from the start. A failed write (a full disk, /dev/full)
// is an error, never a silent truncation.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace fraglab {

// Throws std::invalid_argument, naming `path`, where no output could be written there: an
// empty name, a directory, a missing or unwritable directory (tried by creating a file
// there), or one of `inputs` (the same file by device and inode). Commands call it on their
// outputs before any work, so that an hour's replay does not end in "cannot write".
void check_output_file(std::string const& path, std::vector<std::string> const& inputs = {});

// The same file, as far as an output can tell: two outputs naming one target would write
// one over the other. `-`, /dev/stdout and /proc/self/fd/1 are all standard output.
bool same_output(std::string const& a, std::string const& b);

class output_file {
 public:
  // Throws std::invalid_argument where check_output_file does, std::runtime_error when the
  // temporary file cannot be created.
  explicit output_file(std::string path);
  output_file(output_file const&) = delete;
  output_file& operator=(output_file const&) = delete;
  ~output_file();

  // Seekable whatever the target, so that a writer may patch a header once it knows the counts.
  std::ofstream& stream() noexcept { return out_; }

  // Puts the content in place. Throws std::runtime_error (and leaves the target as it was,
  // unless it is written through or in place and the failure came part-way) on a write error.
  void commit();

 private:
  enum class kind { replace, in_place, through };
  void discard() noexcept;  // removes the temporary; the target is left as it was

  std::string path_;    // as the user named it, for messages
  std::string target_;  // what is written: the link's final target, or the device
  kind kind_ = kind::replace;
  std::string tmp_;     // the temporary's name beside the target (replace); empty otherwise
  int fd_ = -1;
  std::ofstream out_;
  bool done_ = false;
};

// Writes `content` to `path` through an output_file.
void write_output_file(std::string const& path, std::string const& content);

}  // namespace fraglab
