// Ragged batches: per-sequence KV lengths (--kv_lens) or query lengths (--q_lens, a mixed batch) given as an explicit list ("list:812,4096,77"), a seeded uniform
// distribution ("uniform:512:8192" or "uniform:512:8192:SEED", seed 1 by default) or a file of lengths, one a
// line, as taken from a serving trace ("file:PATH"; blank lines and # comments skipped; the first B are used).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ab {

struct KvLengthsSpec {
  enum class Kind { list, uniform, file };
  Kind kind = Kind::list;
  std::string text;                 // as the user wrote it (the label and report show it)
  std::vector<std::int64_t> values; // list, file: the lengths read
  std::int64_t lo = 0, hi = 0;      // uniform: inclusive bounds
  std::uint64_t seed = 1;           // uniform
  std::string axis = "kv_lens";     // the axis it was given for: errors name its flag
};

// Parses one spec of `axis` (kv_lens or q_lens); throws UsageError ("--kv_lens: ...", one line) on a malformed spec, a zero or negative
// length, bounds out of order, or a file that cannot be read or holds something other than lengths.
KvLengthsSpec parse_kv_lengths_spec(const std::string& text, const std::string& axis = "kv_lens");

// The lengths of `batch` sequences. Throws UsageError when a list's size is not `batch` or a file holds fewer.
// The uniform draw is the same on every machine (mt19937_64, reduced by modulo; no library distribution).
std::vector<std::int64_t> kv_lengths_for(const KvLengthsSpec& spec, std::int64_t batch);

// A short, stable digest of lengths (FNV-1a, hex) for labels and cache keys of list and file specs.
std::string kv_lengths_digest(const std::vector<std::int64_t>& lengths);

}  // namespace ab
