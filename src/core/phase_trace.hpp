// Where a command's wall time goes, for the developers of the scale-out paths: with ATTNBENCH_TRACE set, each
// trace_phase() call writes one line "attnbench trace: T +S pid P: PHASE" (T the wall clock in seconds since
// the epoch, S the seconds since this process's first trace line), so that a parent's and its device workers'
// lines sort into one timeline. ATTNBENCH_TRACE=1 writes to stderr; any other value is a file that every
// process appends to (one write a line). Unset: nothing, at the cost of one cached getenv.
#pragma once
#include <string>

namespace ab {

bool phase_trace_enabled();
void trace_phase(const std::string& phase);

}  // namespace ab
