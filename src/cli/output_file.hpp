// Where compare/report send their rendering: stdout, or a file (core/file_writer.hpp).
#pragma once
#include <string>

namespace ab {

// Writes `text` to `path` atomically, or to stdout when `path` is empty; throws UsageError when it cannot.
void emit_text(const std::string& path, const std::string& text);
// Checks that --format is one of `allowed` ("console|md|csv"); throws UsageError naming the choices.
void check_format(const std::string& format, const std::string& allowed);

}  // namespace ab
