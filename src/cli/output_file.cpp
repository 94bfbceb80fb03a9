// Text output for the compare and report subcommands: stdout, or a file through core/file_writer.
#include "cli/output_file.hpp"

#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/file_writer.hpp"

namespace ab {

void emit_text(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  write_file_atomic(path, text);
}

void check_format(const std::string& format, const std::string& allowed) {
  std::stringstream ss(allowed);
  std::string item;
  while (std::getline(ss, item, '|'))
    if (item == format || (item == "md" && format == "markdown")) return;
  throw UsageError(fmt::format("--format: '{}' is not one of {}", format, allowed));
}

}  // namespace ab
