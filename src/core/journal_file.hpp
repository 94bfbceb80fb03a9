// A journal: JSON lines appended beside an output as work finishes, each line written whole and fsync'd, so
// that what finished survives an interrupted or killed process. The first line is a header saying what
// produced it (the run's command, tool, settings, grid) and a random run id; every later line carries a
// checksum of itself and that id ("check"), so that an edited line, or a line of another run, is known.
// `--resume` reads it back, checks the header, and takes only the lines that check.
//
// The journal is written only as a file of attnbench's own: a symbolic link, a read-only file, or a file
// that is not a journal at its path is refused, never followed or truncated; a new journal is written
// beside it and renamed into place. The writer holds an exclusive lock (flock) on the journal while it
// lives, so a second run writing the same output is refused at its start instead of mixing the two.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"

namespace ab {

inline constexpr const char* kJournalSchema = "attnbench.journal/1";
inline constexpr std::int64_t kMaxJournalBytes = std::int64_t(1) << 30;

// The journal is held by another process (its exclusive lock): a UsageError the caller may choose to survive.
struct JournalBusy : UsageError {
  using UsageError::UsageError;
};

struct JournalEntry {
  nlohmann::json value;  // the entry as appended (without "check")
  std::size_t line = 0;  // its line in the file, from 1 (the header)
  std::string fault;     // "" when it checks; else why not ("its checksum does not match", ...)
};

struct JournalContents {
  nlohmann::json header;              // with "schema": kJournalSchema; null when no whole first line was written
  std::vector<JournalEntry> entries;  // in the order written
  bool torn_tail = false;             // the last line was cut short (killed mid-write) and was ignored
};

class JournalWriter {
 public:
  // fresh: a new journal holding `header` (a run id added) replaces any journal at `path`. Otherwise
  // continues the journal there, whose header (read back, with its run id) is `header`, cutting off a torn
  // last line first. Throws UsageError "cannot write journal 'PATH': why" (a link, read-only, not a journal),
  // JournalBusy when another process holds it.
  JournalWriter(const std::string& path, const nlohmann::json& header, bool fresh);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  // One line with its checksum, written whole and fsync'd before returning; throws UsageError when it cannot.
  void append(const nlohmann::json& entry);
  // The work it recorded is written elsewhere for good (the report, the cache): removes the journal file,
  // still holding its lock, then closes it. Nothing is appended afterwards.
  void remove_file();
  const std::string& path() const { return path_; }

 private:
  void write_line(const std::string& line);
  std::string path_;
  std::string run_id_;
  int fd_ = -1;
};

// Reads a journal (at most kMaxJournalBytes; each line at most kMaxJsonDepth deep). UsageError "'PATH': why"
// when it cannot be read or its first line is not a journal header. A line that is not JSON, or whose
// checksum does not match, is returned with its fault; a last line without its newline is a write cut
// short: it is ignored.
JournalContents read_journal(const std::string& path);

// Where the journal of an output file lives: "PATH.journal", or "" when the output is not a regular file
// (a pipe, /dev/stdout): such outputs have no journal.
std::string journal_path_for(const std::string& output_path);

// Checks that a journal's header matches the one this run would write (every field of `expected`); throws
// UsageError "--resume: 'PATH' ...: its FIELD differs (was X, now Y)".
void check_journal_header(const std::string& path, const nlohmann::json& found, const nlohmann::json& expected);

}  // namespace ab
