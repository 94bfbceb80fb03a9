// A journal: JSON lines appended beside an output as work finishes, each line written whole and fsync'd, so
// that what finished survives an interrupted or killed process. The first line is a header saying what
// produced it (the run's command, tool, settings, grid); `--resume` reads it back and checks the header.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ab {

inline constexpr const char* kJournalSchema = "attnbench.journal/1";

struct JournalContents {
  nlohmann::json header;                // with "schema": kJournalSchema
  std::vector<nlohmann::json> entries;  // in the order written
  bool torn_tail = false;               // the last line was cut short (killed mid-write) and was ignored
};

class JournalWriter {
 public:
  // fresh: replaces any journal at `path` with one holding `header`. Otherwise appends to the journal there
  // (its header already checked by the caller), cutting off a torn last line first. Throws UsageError
  // "cannot write journal 'PATH': why".
  JournalWriter(const std::string& path, const nlohmann::json& header, bool fresh);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  // One line, written whole and fsync'd before returning; throws UsageError when it cannot.
  void append(const nlohmann::json& entry);
  const std::string& path() const { return path_; }

 private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
};

// Reads a journal. UsageError "'PATH': why" when it cannot be read, its header is not a journal's, or a
// line before the last is not JSON. A last line without its newline is a write cut short: it is ignored.
JournalContents read_journal(const std::string& path);

// Where the journal of an output file lives: "PATH.journal", or "" when the output is not a regular file
// (a pipe, /dev/stdout): such outputs have no journal.
std::string journal_path_for(const std::string& output_path);

// Checks that a journal's header matches the one this run would write (every field but "created"); throws
// UsageError "--resume: 'PATH' ...: its FIELD differs (was X, now Y)".
void check_journal_header(const std::string& path, const nlohmann::json& found, const nlohmann::json& expected);

}  // namespace ab
