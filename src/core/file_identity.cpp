// Path identity for the outputs-are-not-inputs rule.
#include "core/file_identity.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/input_file.hpp"

namespace ab {

namespace {

// A path that names a file to compare: not stdout, and not a special file written in place.
bool comparable(const std::string& path) {
  if (path.empty() || path == "-") return false;
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  return ec || !std::filesystem::exists(st) || std::filesystem::is_regular_file(st);
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) return std::filesystem::equivalent(a, b, ec);
  // weakly_canonical keeps a relative path relative (libstdc++): make it absolute first.
  auto normal = [&ec](const std::string& p) {
    return std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec).lexically_normal();
  };
  return normal(a) == normal(b);
}

void check_outputs_distinct(const std::vector<RolePath>& outputs, const std::vector<RolePath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const RolePath& out = outputs[i];
    if (!comparable(out.path)) continue;
    for (const RolePath& in : inputs)
      if (comparable(in.path) && same_file(out.path, in.path))
        throw UsageError(fmt::format("{} {} is also {}: an output must not replace an input; choose another path",
                                     out.role, quoted_path(out.path), in.role));
    for (std::size_t j = 0; j < i; ++j)
      if (comparable(outputs[j].path) && same_file(out.path, outputs[j].path))
        throw UsageError(fmt::format("{} {} is also {}: two outputs cannot share one file", out.role, quoted_path(out.path),
                                     outputs[j].role));
  }
}

}  // namespace ab
