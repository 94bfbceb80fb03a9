// The journal of a run or tune over a grid (core/journal_file.hpp): one line per finished problem, keyed by
// its grid index, beside the output (report or cache) as OUTPUT.journal. A fresh run starts a new journal;
// --resume reads the one there, checks that it came from the same command, tool, settings, grid and shard
// (else exit 2), and the run skips the problems it holds. Lines are checked, not trusted: a line that does
// not check (edited, cut, of a problem outside the shard) is dropped with a note and its problem runs again;
// a problem journaled twice keeps its last line. A journal with no whole header line (killed as it started)
// holds nothing and is started afresh.
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
  // afresh, with a note; notes are printed even when quiet); UsageError when its header differs from
  // `header`. `problems`: the grid indices this process may finish (its shard); lines of others are dropped.
  // A journal another process holds refuses the run (JournalBusy), unless `shared_output` (tunes into one
  // cache merge, so a second one may run): then, unless resuming, it runs without a journal, with a note.
  GridJournal(const std::string& path, const nlohmann::json& header, bool resume, bool quiet,
              const std::vector<std::size_t>& problems, bool shared_output = false);

  bool active() const { return writer_ != nullptr; }
  bool done(std::size_t problem) const { return done_.count(problem) > 0; }
  // Entries of the problems finished before this process, by grid index.
  const std::map<std::size_t, nlohmann::json>& resumed() const { return done_; }
  // Drops a resumed entry that its user found wrong (`why`): the problem runs again; said on stderr.
  void drop(std::size_t problem, const std::string& why);
  // Lines of the journal dropped on reading or by drop().
  std::size_t dropped() const { return dropped_; }
  // Appends the entry of a finished problem ("problem": its index is added), fsync'd.
  void record(std::size_t problem, nlohmann::json entry);
  // Every problem finished and its output is written: the journal is removed (a successful run leaves only
  // the files its user asked for; run and tune keep it under --resume). No journal: nothing to do.
  void finish();
  const std::string& path() const { return path_; }

 private:
  void open(const nlohmann::json& header, bool resume, const std::vector<std::size_t>& problems);
  std::string path_;
  std::map<std::size_t, nlohmann::json> done_;
  std::map<std::size_t, std::size_t> line_of_;
  std::size_t dropped_ = 0;
  std::unique_ptr<JournalWriter> writer_;
};

}  // namespace ab
