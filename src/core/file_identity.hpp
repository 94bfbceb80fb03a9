// Which paths name the same file, and the rule that no output of a command is one of its inputs or another
// of its outputs (`--cache=c.json --json=c.json` would replace the tuned cache with a report).
#pragma once
#include <string>
#include <vector>

namespace ab {

// True when `a` and `b` name one file: the same inode where both exist, else the same normalised path.
bool same_file(const std::string& a, const std::string& b);

struct RolePath {
  std::string role;  // how the user gave it: "--json", "--cache", "--plugin", "the journal of --json"
  std::string path;
};

// Throws UsageError "ROLE 'PATH' is also ROLE2: ..." when an output names the same file as an input or
// another output. "" and "-" (stdout) are skipped, and so are special files (a pipe, /dev/null), which are
// written in place.
void check_outputs_distinct(const std::vector<RolePath>& outputs, const std::vector<RolePath>& inputs);

}  // namespace ab
