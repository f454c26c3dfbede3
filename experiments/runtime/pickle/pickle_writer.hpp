// Writing plain data as a pickle (protocol 4) a piece at a time: what Python's pickle.load and
// PyTorch's memory viewer read, and what experiments/runtime/pickle/pickle_reader.hpp reads back. Only
// None, bool, int, float, str, list and dict: no object that names code, so the output is safe
// for any reader. A container is written as MARK, its items, then APPENDS or SETITEMS, so a
// list of a million events is never held as a tree.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab::pickle {

class writer {
 public:
  // The bytes are kept, for finish() to return.
  writer();
  // The bytes go to `sink` as they are written, a MiB at a time: a snapshot of gigabytes is
  // never held whole. `sink` must outlive the writer.
  explicit writer(std::ostream& sink);

  void none();
  void boolean(bool b);
  void integer(std::int64_t n);
  void real(double d);
  void text(std::string_view s);

  void begin_list();
  void end_list();
  // Items alternate key, value; end_dict checks that they paired up.
  void begin_dict();
  void end_dict();

  // A dict entry whose value is a scalar, for brevity.
  void entry(std::string_view key, std::int64_t n);
  void entry(std::string_view key, std::string_view s);

  // STOP, and the bytes (with a sink: STOP written to it, and nothing returned); throws
  // std::logic_error if a container is still open.
  std::string finish();

 private:
  void item();
  std::string out_;
  std::ostream* sink_ = nullptr;
  struct open {
    bool dict;
    std::size_t items;
  };
  std::vector<open> open_;
};

}  // namespace fraglab::pickle
