// The deferred notes of cli/command_notes.hpp: one list per process.
#include "cli/command_notes.hpp"

#include <cstdio>

#include "core/text_excerpt.hpp"

namespace ab {

namespace {
std::vector<std::string>& pending() {
  static std::vector<std::string> notes;
  return notes;
}
}  // namespace

void defer_note(const std::string& note) { pending().push_back(note); }

void defer_notes(const std::vector<std::string>& notes) {
  for (const std::string& n : notes) defer_note(n);
}

void say_deferred_notes(bool quiet) {
  if (!quiet)
    for (const std::string& n : pending()) std::fprintf(stderr, "attnbench: note: %s\n", escaped_text(n, 1024).c_str());
  pending().clear();
}

}  // namespace ab
