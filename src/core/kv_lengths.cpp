// Parsing and expansion of ragged-batch length specs.
#include "core/kv_lengths.hpp"

#include <random>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fnv_hash.hpp"
#include "core/input_file.hpp"
#include "core/text_excerpt.hpp"
#include "core/text_split.hpp"

namespace ab {

namespace {

constexpr std::int64_t kMaxLength = std::int64_t(1) << 40;
// A lengths file holds one short number a line: 16 MiB is over a million sequences.
constexpr std::int64_t kMaxLengthsFileBytes = std::int64_t(16) << 20;

std::int64_t parse_length(const std::string& word, const std::string& where, const std::string& axis) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (word.empty() || used != word.size())
    throw UsageError(fmt::format("--{}: {} in {} is not a whole number", axis, quoted_excerpt(word), where));
  if (v <= 0) throw UsageError(fmt::format("--{}: length {} in {} is not positive", axis, v, where));
  if (v > kMaxLength) throw UsageError(fmt::format("--{}: length {} in {} is too large", axis, v, where));
  return v;
}

}  // namespace

KvLengthsSpec parse_kv_lengths_spec(const std::string& text, const std::string& axis) {
  KvLengthsSpec s;
  s.text = text;
  s.axis = axis;
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string rest = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  const std::string where = "'" + escaped_text(text, 80) + "'";
  if (kind == "list") {
    s.kind = KvLengthsSpec::Kind::list;
    if (rest.empty()) throw UsageError(fmt::format("--{}: {} lists no lengths (list:812,4096,77)", axis, where));
    for (const std::string& w : split_text(rest, ',')) s.values.push_back(parse_length(trim_text(w), where, axis));
    return s;
  }
  if (kind == "uniform") {
    s.kind = KvLengthsSpec::Kind::uniform;
    auto parts = split_text(rest, ':');
    if (rest.empty() || parts.size() < 2 || parts.size() > 3)
      throw UsageError(fmt::format("--{}: {} is not uniform:LO:HI or uniform:LO:HI:SEED", axis, where));
    s.lo = parse_length(parts[0], where, axis);
    s.hi = parse_length(parts[1], where, axis);
    if (s.lo > s.hi) throw UsageError(fmt::format("--{}: {} has LO above HI", axis, where));
    if (parts.size() == 3) {
      const std::string& w = parts[2];
      if (w.empty() || w.find_first_not_of("0123456789") != std::string::npos || w.size() > 18)
        throw UsageError(fmt::format("--{}: seed {} in {} is not a whole number", axis, quoted_excerpt(w), where));
      s.seed = std::stoull(w);
    }
    return s;
  }
  if (kind == "file") {
    s.kind = KvLengthsSpec::Kind::file;
    if (rest.empty()) throw UsageError(fmt::format("--{}: {} names no file (file:PATH)", axis, where));
    std::string file;
    try {
      file = read_input_file(rest, kMaxLengthsFileBytes);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--{}: the lengths file {}", axis, e.what()));
    }
    int line_no = 0;
    for (const std::string& line : split_text(file, '\n')) {
      ++line_no;
      std::string t = trim_text(line.substr(0, line.find('#')));
      if (t.empty()) continue;
      s.values.push_back(parse_length(t, fmt::format("{} line {}", quoted_path(rest), line_no), axis));
    }
    if (s.values.empty()) throw UsageError(fmt::format("--{}: the lengths file {} holds no lengths", axis, quoted_path(rest)));
    return s;
  }
  throw UsageError(fmt::format("--{}: {} is not list:L1,L2,..., uniform:LO:HI[:SEED] or file:PATH", axis, where));
}

std::vector<std::int64_t> kv_lengths_for(const KvLengthsSpec& s, std::int64_t batch) {
  switch (s.kind) {
    case KvLengthsSpec::Kind::list:
      if (static_cast<std::int64_t>(s.values.size()) != batch)
        throw UsageError(fmt::format("--{}: '{}' has {} lengths for batch {} (give one per sequence)", s.axis, s.text,
                                     s.values.size(), batch));
      return s.values;
    case KvLengthsSpec::Kind::file:
      if (static_cast<std::int64_t>(s.values.size()) < batch)
        throw UsageError(fmt::format("--{}: '{}' has {} lengths, fewer than batch {}", s.axis, s.text, s.values.size(), batch));
      return std::vector<std::int64_t>(s.values.begin(), s.values.begin() + batch);
    case KvLengthsSpec::Kind::uniform: {
      std::mt19937_64 rng(s.seed);
      const std::uint64_t span = static_cast<std::uint64_t>(s.hi - s.lo) + 1;
      std::vector<std::int64_t> out(static_cast<std::size_t>(batch));
      for (auto& v : out) v = s.lo + static_cast<std::int64_t>(rng() % span);
      return out;
    }
  }
  return {};
}

std::string kv_lengths_digest(const std::vector<std::int64_t>& lengths) {
  std::uint64_t h = kFnvBasis;
  for (std::int64_t v : lengths)
    for (int i = 0; i < 8; ++i) h = fnv1a_byte(h, static_cast<unsigned char>(static_cast<std::uint64_t>(v) >> (8 * i)));
  return fmt::format("{:08x}", static_cast<std::uint32_t>(h ^ (h >> 32)));
}

}  // namespace ab
