// The one table of problem axes. Each axis (batch, heads, kv_heads, seq_len | kv_lens, q_len, head_dim,
// pages | page_size, kv_layout, dtype, causal, window, softcap, sinks, head_dim_v, q_lens) is declared once, with its name (JSON key, CSV column, suite key), CLI spellings, default,
// parser and checks, label and cache-key fragments. The grid product, the run/tune flags, --config suites,
// the problem label and key, the problem JSON and the CSV problem columns all come from it: adding an axis
// is one entry in problem_axes.cpp plus the code that uses the value.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace ab {

// How an axis's value is written in JSON: a whole number, a word, or true/false.
enum class AxisType { integer, word, boolean };

// make_problem's arguments, filled axis by axis while a grid expands (0: not given). A ragged-length spec is
// carried as the code its axis's parser gave it (kv_lens_code, -1: none) and expanded for the batch in make().
struct ProblemDraft : ProblemSpec {
  std::int64_t kv_lens_code = -1;
  std::int64_t q_lens_code = -1;  // q_lens the same way
  // --batch was not given: a list or file of lengths sets the batch (one sequence per length).
  bool batch_from_lengths = false;
  // Where the choices made for the user are said (the batch taken from the lengths, a lengths file cut
  // short); each note once. nullptr: not said.
  std::vector<std::string>* notes = nullptr;
  Problem make() const;  // make_problem: throws UsageError on an invalid problem
};

struct ProblemAxis {
  const char* name;          // JSON key, CSV column, suite key and the flag's name in errors ("--batch: ...")
  const char* cli;           // CLI11 spellings, e.g. "--seq_len,--seq-len,-s"
  const char* help;          // the flag's help text
  const char* default_text;  // text when not given; "" : the axis is off unless given (page_size)
  const char* replaces;      // another axis this one stands in for when given, "" none (page_size: pages)
  bool cli_flag;             // given alone ("--causal") it means "true"
  AxisType type;
  int nest;                  // rank in the grid product, outermost 0 (the expansion order of earlier versions)
  // Text in the axis grammar (value, list, range; words; booleans) → value codes. Throws UsageError naming
  // the axis on malformed, empty, repeated or invalid text.
  std::vector<std::int64_t> (*parse)(const std::string& text);
  void (*apply)(ProblemDraft& d, std::int64_t code);
  nlohmann::json (*to_json)(const Problem& p);
  // Fragments read from a problem's JSON (problem_to_json): "" leaves none.
  std::string (*label)(const nlohmann::json& problem);
  std::string (*cache_key)(const nlohmann::json& problem);
  char list_separator = ',';  // between values in a suite's list (kv_lens specs hold commas: ';')
};

// Every axis, in label / JSON / CSV order.
const std::vector<ProblemAxis>& problem_axes();
// The axis named `name` (its JSON key), or nullptr.
const ProblemAxis* find_problem_axis(const std::string& name);

// "B=32 H=12 S=512 D=64 P=1 contiguous fp16" (+ " ps=N" when paged into several pages, + " causal").
std::string problem_label(const Problem& p);
// The key compare and report match rows by: the problem JSON (sorted keys) without pages_requested.
std::string problem_key(const Problem& p);
// {"batch", "heads", "kv_heads", "seq_len", "q_len", "head_dim", "pages", "page_size", "pages_requested",
// "kv_layout", "dtype", "causal"}, and when ragged "kv_lens" (the spec) and "kv_lens_values" (the lengths,
// so that a run can be repeated without the spec's file).
nlohmann::json problem_to_json(const Problem& p);
// The inverse of problem_to_json (older reports without kv_heads / q_len read as self-attention); throws UsageError "ORIGIN: problem.FIELD ..." (one line) on a missing,
// mistyped or inconsistent field.
Problem problem_from_json(const nlohmann::json& j, const std::string& origin);
// The CSV header cells of the problem ("batch", ..., "causal") and one problem's cells (unquoted).
std::vector<std::string> problem_csv_columns();
std::vector<std::string> problem_csv_cells(const Problem& p);

// "B32_H12_S512_D64_P1_ps512_contiguous_fp16_full": the heuristic cache's problem key, from a problem's JSON
// (tune/problem_key.cpp's problem_cache_key passes problem_to_json). The inference axes add fragments only
// when they differ from self-attention (KVH8, q1, lens...), so keys written before them still match.
std::string problem_cache_key_of_json(const nlohmann::json& problem);

}  // namespace ab
