// Standard output that can fail: a full disk (>/dev/full), a closed descriptor (>&-), a reader that went
// away. Nothing attnbench prints there is lost in silence: main() asks at the end whether every write got
// through and turns a failure into one error line and a non-zero exit. A closed standard descriptor is
// first held by /dev/null (read-only for stdout, so writes to it fail), so that no file attnbench opens
// later (a journal, a report) takes descriptor 1 and receives the console table. SIGPIPE is ignored, so that a
// reader gone away (`| head`) is such a failure too, not a silent death.
#pragma once
#include <string>

namespace ab {

// Call first in main(): ignores SIGPIPE; holds a closed descriptor 0 or 2 with /dev/null, 1 with a directory
// (writes fail, and so does opening /dev/stdout).
void reserve_standard_descriptors();
// A write to stdout that failed with `err` (errno), for the message.
void note_standard_output_error(int err);
// Flushes stdout; "" when everything written to it arrived, else what went wrong (one line).
std::string standard_output_failure();

}  // namespace ab
