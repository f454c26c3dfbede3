// A file with no name: created in $TMPDIR (else /tmp) and unlinked at once, so that nothing is
// left behind however the process ends. Both the outputs that reach their target by copying
// and the spooled inputs live in one.
#pragma once

namespace fraglab {

// An open, read-write descriptor (close-on-exec); throws std::runtime_error naming the
// directory where none can be created.
int unlinked_temporary_file();

}  // namespace fraglab
