// Notes about choices made for the user (a flag given twice, a batch taken from the lengths, a smaller CPU
// default): kept until the command has checked every flag and starts its work, then said once on stderr, so
// that a refused command still says exactly one line (its error).
#pragma once
#include <string>
#include <vector>

namespace ab {

void defer_note(const std::string& note);
void defer_notes(const std::vector<std::string>& notes);
// "attnbench: note: ..." for each note not yet said, unless quiet (then they are dropped).
void say_deferred_notes(bool quiet);

}  // namespace ab
