// Starting, resuming (with every line checked) and appending to a grid's journal.
#include "orchestrate/grid_journal.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fnv_hash.hpp"
#include "core/input_file.hpp"
#include "core/problem_axes.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

namespace {

// "line 3: why; line 7: why; and 2 more" from the reasons of dropped lines.
std::string listed(const std::vector<std::string>& reasons) {
  std::string out;
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) out += (i ? "; " : "") + reasons[i];
  if (reasons.size() > 3) out += fmt::format("; and {} more", reasons.size() - 3);
  return out;
}

}  // namespace

nlohmann::json grid_fingerprint(const std::vector<Problem>& problems) {
  std::uint64_t h = kFnvBasis;
  for (const Problem& p : problems) h = fnv1a(problem_to_json(p).dump() + "\n", h);
  return {{"size", problems.size()}, {"hash", fmt::format("{:016x}", h)}};
}

GridJournal::GridJournal(const std::string& path, const nlohmann::json& header, bool resume, bool quiet,
                         const std::vector<std::size_t>& problems, bool shared_output)
    : path_(path) {
  (void)quiet;  // notes are said even with --quiet: which problems are skipped matters
  if (path.empty()) return;
  try {
    open(header, resume, problems);
  } catch (const JournalBusy&) {
    if (!shared_output || resume) throw;
    writer_.reset();
    done_.clear();
    std::fprintf(stderr, "attnbench: note: another attnbench process is journaling %s; this one keeps no journal "
                 "(its work still merges into the output; --resume cannot continue it)\n", quoted_path(path).c_str());
  }
}

void GridJournal::open(const nlohmann::json& header, bool resume, const std::vector<std::size_t>& problems) {
  const std::string& path = path_;
  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::symlink_status(path, ec));
  if (resume && exists) {
    JournalContents c = read_journal(path);
    if (c.header.is_null()) {
      std::fprintf(stderr, "attnbench: --resume: %s holds no whole header line (a run killed as it started); starting "
                   "from the beginning\n", quoted_path(path).c_str());
      writer_ = std::make_unique<JournalWriter>(path, header, /*fresh=*/true);
      return;
    }
    check_journal_header(path, c.header, header);
    const std::set<std::size_t> mine(problems.begin(), problems.end());
    std::vector<std::string> reasons;
    for (const JournalEntry& e : c.entries) {
      std::string why = e.fault;
      auto it = e.value.find("problem");
      if (why.empty() && (it == e.value.end() || !it->is_number_unsigned() || !mine.count(it->get<std::size_t>())))
        why = "its problem index is not one of this run's";
      if (!why.empty()) {
        reasons.push_back(fmt::format("line {}: {}", e.line, why));
        continue;
      }
      const std::size_t index = it->get<std::size_t>();
      if (done_.count(index)) reasons.push_back(fmt::format("line {}: problem {} again (line {} is kept)", line_of_[index],
                                                            index, e.line));
      done_[index] = e.value;
      line_of_[index] = e.line;
    }
    dropped_ = reasons.size();
    writer_ = std::make_unique<JournalWriter>(path, c.header, /*fresh=*/false);
    std::fprintf(stderr, "attnbench: resuming from %s: %zu problem(s) already done%s\n", quoted_path(path).c_str(),
                 done_.size(), c.torn_tail ? " (a torn last line was dropped)" : "");
    if (!reasons.empty())
      std::fprintf(stderr, "attnbench: --resume: %zu line(s) of %s dropped (%s); their problems run again\n",
                   reasons.size(), quoted_path(path).c_str(), listed(reasons).c_str());
    return;
  }
  if (resume) std::fprintf(stderr, "attnbench: --resume: no journal at %s; starting from the beginning\n", quoted_path(path).c_str());
  writer_ = std::make_unique<JournalWriter>(path, header, /*fresh=*/true);
}

void GridJournal::drop(std::size_t problem, const std::string& why) {
  auto it = done_.find(problem);
  if (it == done_.end()) return;
  std::fprintf(stderr, "attnbench: --resume: line %zu of %s dropped (%s); problem %zu runs again\n", line_of_[problem],
               quoted_path(path_).c_str(), escaped_text(why, 300).c_str(), problem);
  done_.erase(it);
  ++dropped_;
}

void GridJournal::finish() {
  if (!writer_) return;
  writer_->remove_file();
  writer_.reset();
}

void GridJournal::record(std::size_t problem, nlohmann::json entry) {
  if (!writer_) return;
  entry["problem"] = problem;
  writer_->append(entry);
}

}  // namespace ab
