// The journal of a run or tune over a grid (core/journal_file.hpp): one line per finished problem, keyed by
// its grid index, beside the output (report or cache) as OUTPUT.journal. A fresh run starts a new journal;
// --resume reads the one there, checks that it came from the same command, tool, settings, grid and shard
// (else exit 2), and the run skips the problems it holds.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/journal_file.hpp"
#include "core/problem.hpp"

namespace ab {

// A fingerprint of a grid: its size and a 64-bit FNV-1a hash of every problem's JSON, in order.
nlohmann::json grid_fingerprint(const std::vector<Problem>& problems);

class GridJournal {
 public:
  // No journal at all (an output that is not a regular file, a fresh-process child, a dry run).
  GridJournal() = default;
  // `path` "" : no journal. resume: continue the journal at `path` when there is one (a missing one starts
  // afresh, with a note; both notes are printed even when quiet); UsageError when its header differs from `header`.
  GridJournal(const std::string& path, const nlohmann::json& header, bool resume, bool quiet);

  bool active() const { return writer_ != nullptr; }
  bool done(std::size_t problem) const { return done_.count(problem) > 0; }
  // Entries of the problems finished before this process, by grid index.
  const std::map<std::size_t, nlohmann::json>& resumed() const { return done_; }
  // Appends the entry of a finished problem ("problem": its index is added), fsync'd.
  void record(std::size_t problem, nlohmann::json entry);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::size_t, nlohmann::json> done_;
  std::unique_ptr<JournalWriter> writer_;
};

}  // namespace ab
