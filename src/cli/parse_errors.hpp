// What the command line's parse errors say, in the project's one-line style: an unknown command or flag with
// the closest known name ("did you mean 'list'?"), a missing positional argument with the command's usage,
// and the notes said after a parse (a flag given twice with different values: the last one is used).
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ab {

// The closest of `known` to `word` (edit distance at most 2, or a prefix of at least 3 letters), or "".
std::string closest_name(const std::string& word, const std::vector<std::string>& known);

// The one line for a CLI11 parse error of `app` (its subcommand's, when one was chosen).
std::string parse_error_line(const CLI::App& app, const CLI::ParseError& e);

// One note per flag of the chosen command given more than once with different values ("--batch given 2
// times; the last, '8', is used"). Repeatable flags (--where, --plugin) are not repeated flags.
std::vector<std::string> repeated_flag_notes(const CLI::App& app);

}  // namespace ab
