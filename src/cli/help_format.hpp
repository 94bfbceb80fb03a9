// attnbench's --help: one spelling per flag (its first long name; the hyphenated twins still parse), a value
// placeholder instead of CLI11's type names, each default shown once (in the description, unless the
// description already says it), and no CLI11 "Excludes:"/"Needs:" lists (the descriptions say what matters).
#pragma once
#include <memory>

#include <CLI/CLI.hpp>

namespace ab {

std::shared_ptr<CLI::Formatter> help_formatter();

}  // namespace ab
