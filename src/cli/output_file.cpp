// Text output for the compare and report subcommands: stdout, or a file through core/file_writer.
#include "cli/output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "cli/standard_output.hpp"
#include "core/errors.hpp"
#include "core/file_writer.hpp"

namespace ab {

void emit_text(const std::string& path, const std::string& text) {
  if (path.empty()) {
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      note_standard_output_error(errno);  // main() says so and exits non-zero
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
