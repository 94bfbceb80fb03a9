// Atomic text output for the compare and report subcommands.
#include "cli/output_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

void emit_text(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  if (std::filesystem::is_directory(path)) throw UsageError(fmt::format("--output: '{}' is a directory", path));
  std::string tmp = fmt::format("{}.tmp.{}", path, static_cast<long>(getpid()));
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw UsageError(fmt::format("--output: cannot write '{}': directory missing or not writable", path));
    f << text;
    f.flush();
    if (!f) {
      f.close();
      std::remove(tmp.c_str());
      throw UsageError(fmt::format("--output: cannot write '{}': write failed", path));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw UsageError(fmt::format("--output: cannot write '{}': {}", path, ec.message()));
  }
}

void check_format(const std::string& format, const std::string& allowed) {
  std::stringstream ss(allowed);
  std::string item;
  while (std::getline(ss, item, '|'))
    if (item == format || (item == "md" && format == "markdown")) return;
  throw UsageError(fmt::format("--format: '{}' is not one of {}", format, allowed));
}

}  // namespace ab
