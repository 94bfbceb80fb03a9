// Starting, resuming and appending to a grid's journal.
#include "cli/grid_journal.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/problem_axes.hpp"

namespace ab {

nlohmann::json grid_fingerprint(const std::vector<Problem>& problems) {
  std::uint64_t h = 1469598103934665603ull;
  for (const Problem& p : problems) {
    for (unsigned char c : problem_to_json(p).dump() + "\n") {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
  return {{"size", problems.size()}, {"hash", fmt::format("{:016x}", h)}};
}

GridJournal::GridJournal(const std::string& path, const nlohmann::json& header, bool resume, bool quiet) : path_(path) {
  if (path.empty()) return;
  const bool exists = std::filesystem::exists(path);
  if (resume && exists) {
    JournalContents c = read_journal(path);
    check_journal_header(path, c.header, header);
    for (std::size_t i = 0; i < c.entries.size(); ++i) {
      const nlohmann::json& e = c.entries[i];
      auto it = e.find("problem");
      if (it == e.end() || !it->is_number_unsigned() || it->get<std::size_t>() >= header["grid"]["size"].get<std::size_t>())
        throw UsageError(fmt::format("'{}': entry {} has no valid problem index", path, i + 1));
      done_[it->get<std::size_t>()] = e;
    }
    writer_ = std::make_unique<JournalWriter>(path, header, /*fresh=*/false);
    (void)quiet;  // said even with --quiet: which problems are skipped matters
    std::fprintf(stderr, "attnbench: resuming from '%s': %zu problem(s) already done%s\n", path.c_str(), done_.size(),
                   c.torn_tail ? " (a torn last line was dropped)" : "");
    return;
  }
  if (resume) std::fprintf(stderr, "attnbench: --resume: no journal at '%s'; starting from the beginning\n", path.c_str());
  writer_ = std::make_unique<JournalWriter>(path, header, /*fresh=*/true);
}

void GridJournal::record(std::size_t problem, nlohmann::json entry) {
  if (!writer_) return;
  entry["problem"] = problem;
  writer_->append(entry);
}

}  // namespace ab
