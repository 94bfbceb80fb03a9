// libFuzzer target: the journal reader (--resume's input: bounded, line by line, depth-checked, checksummed)
// and the rows of its entries; then a round trip of what it accepted (a fresh journal with the same header
// and entries, read again: every entry checks and is the same). Any exception other than UsageError, any
// sanitizer report, or a round trip that changes an entry is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/journal_file.hpp"
#include "run/result_row.hpp"

namespace {

// One scratch file per fuzzing process.
const std::string& scratch(const char* what) {
  static const std::string dir = [] {
    char pattern[] = "/tmp/fuzz_journal.XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (!made) std::abort();
    return std::string(made);
  }();
  static std::string in = dir + "/in.journal", out = dir + "/out.journal";
  return std::string(what) == "in" ? in : out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream f(scratch("in"), std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ab::JournalContents c;
  try {
    c = ab::read_journal(scratch("in"));
  } catch (const ab::UsageError&) {
    return 0;
  }
  for (const ab::JournalEntry& e : c.entries) {
    if (!e.fault.empty()) continue;
    auto rows = e.value.find("rows");
    if (rows == e.value.end() || !rows->is_array()) continue;
    for (const auto& row : *rows) {
      try {
        (void)ab::result_row_from_json(row, "fuzz", "");
      } catch (const ab::UsageError&) {
      }
    }
  }
  if (c.header.is_null()) return 0;
  std::remove(scratch("out").c_str());
  {
    ab::JournalWriter w(scratch("out"), c.header, /*fresh=*/true);
    for (const ab::JournalEntry& e : c.entries)
      if (e.fault.empty()) w.append(e.value);
  }
  ab::JournalContents again = ab::read_journal(scratch("out"));
  std::size_t k = 0;
  for (const ab::JournalEntry& e : c.entries) {
    if (!e.fault.empty()) continue;
    if (k >= again.entries.size() || !again.entries[k].fault.empty() || again.entries[k].value != e.value) std::abort();
    ++k;
  }
  if (k != again.entries.size()) std::abort();
  return 0;
}
