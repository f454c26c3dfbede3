// An input opened for reading, whatever the user named: a regular file as it is; `-`
// (standard input), a pipe, a process substitution (`<(...)`) or a device, and a gzip or
// zstd file, by way of a spool: its bytes (decompressed) copied once into an unlinked
// temporary file. The spool lets format detection peek at the first bytes and the binary
// reader read the trace again on every pass, which a pipe allows neither; it is made on the
// first open of a name and reused by every later one in the process. Messages keep the name
// the user gave; byte offsets in a compressed input count its decompressed bytes.
#pragma once

#include <fraglab/runtime/io/input_error.hpp>

#include <fstream>
#include <ios>
#include <string>
#include <string_view>

namespace fraglab {

// Throws input_error naming `path`: a directory ("expected `expected`", e.g. "a trace
// file"), a file that cannot be opened, a compression fraglab does not read (xz, bzip2,
// lz4, zip, 7z: named, with the command that decompresses it), or a corrupt compressed stream.
std::ifstream open_input(std::string const& path, std::string_view expected, std::ios::openmode mode = std::ios::in);

}  // namespace fraglab
