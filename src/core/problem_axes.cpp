// The table of problem axes and every fact derived from it: label, keys, problem JSON, CSV cells.
#include "core/problem_axes.hpp"

#include <fmt/format.h>

#include "core/axis.hpp"
#include "core/errors.hpp"

namespace ab {

using nlohmann::json;

namespace {

// Reads of a problem's JSON (problem_to_json's, or the cache key's caller's).
std::int64_t int_at(const json& j, const char* key, std::int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return fallback;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  double d = it->get<double>();
  return d >= -9.2e18 && d <= 9.2e18 ? static_cast<std::int64_t>(d) : fallback;
}

std::string str_at(const json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_string() ? fallback : it->get<std::string>();
}

bool bool_at(const json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::vector<std::int64_t> parse_layouts(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const auto& w : split_list("kv_layout", text)) {
    KvLayout l;
    if (!parse_kv_layout(w, &l)) throw UsageError(fmt::format("--kv_layout: unknown layout '{}' (contiguous, paged)", w));
    out.push_back(static_cast<std::int64_t>(l));
  }
  return out;
}

std::vector<std::int64_t> parse_dtypes(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const auto& w : split_list("dtype", text)) {
    auto t = parse_dtype(w);
    if (!t) throw UsageError(fmt::format("--dtype: unknown dtype '{}' (fp16, bf16)", w));
    out.push_back(static_cast<std::int64_t>(*t));
  }
  return out;
}

std::vector<std::int64_t> parse_causal(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const std::string& w : split_list("causal", text)) {
    if (w == "true" || w == "1" || w == "on" || w == "yes") out.push_back(1);
    else if (w == "false" || w == "0" || w == "off" || w == "no") out.push_back(0);
    else throw UsageError(fmt::format("--causal: '{}' is not true or false", w));
  }
  return out;
}

std::string number_or_minus(const json& p, const char* key) { return std::to_string(int_at(p, key, -1)); }

// The table. Order: label, JSON and CSV order. `nest`: the grid product's loop order, outermost first.
const std::vector<ProblemAxis> kAxes = {
    {"batch", "--batch,-b", "batch size: value, list (1,8,32) or range (1:64:*2, 64:256:+64)", "32", "", false,
     AxisType::integer, 4, [](const std::string& t) { return parse_axis("batch", t); },
     [](ProblemDraft& d, std::int64_t v) { d.batch = v; }, [](const Problem& p) { return json(p.batch); },
     [](const json& p) { return "B=" + number_or_minus(p, "batch"); },
     [](const json& p) { return "B" + number_or_minus(p, "batch"); }},
    {"heads", "--heads", "heads per batch (value, list or range)", "12", "", false, AxisType::integer, 5,
     [](const std::string& t) { return parse_axis("heads", t); }, [](ProblemDraft& d, std::int64_t v) { d.heads = v; },
     [](const Problem& p) { return json(p.heads); }, [](const json& p) { return "H=" + number_or_minus(p, "heads"); },
     [](const json& p) { return "H" + number_or_minus(p, "heads"); }},
    {"seq_len", "--seq_len,--seq-len,-s", "sequence length (value, list or range)", "512", "", false,
     AxisType::integer, 6, [](const std::string& t) { return parse_axis("seq_len", t); },
     [](ProblemDraft& d, std::int64_t v) { d.seq_len = v; }, [](const Problem& p) { return json(p.seq_len); },
     [](const json& p) { return "S=" + number_or_minus(p, "seq_len"); },
     [](const json& p) { return "S" + number_or_minus(p, "seq_len"); }},
    {"head_dim", "--head_dim,--head-dim,-d", "head dimension (value, list or range)", "64", "", false,
     AxisType::integer, 3, [](const std::string& t) { return parse_axis("head_dim", t); },
     [](ProblemDraft& d, std::int64_t v) { d.head_dim = v; }, [](const Problem& p) { return json(p.head_dim); },
     [](const json& p) { return "D=" + number_or_minus(p, "head_dim"); },
     [](const json& p) { return "D" + number_or_minus(p, "head_dim"); }},
    {"pages", "--pages,-p", "KV pages per sequence, page_size = ceil(S/P) (value, list or range; default 1)", "1",
     "", false, AxisType::integer, 7, [](const std::string& t) { return parse_axis("pages", t); },
     [](ProblemDraft& d, std::int64_t v) { d.pages = v; }, [](const Problem& p) { return json(p.pages); },
     [](const json& p) { return "P=" + std::to_string(int_at(p, "pages", 1)); },
     [](const json& p) { return "P" + number_or_minus(p, "pages"); }},
    {"page_size", "--page_size,--page-size", "tokens per KV page (alternative to --pages; value, list or range)", "",
     "pages", false, AxisType::integer, 7, [](const std::string& t) { return parse_axis("page_size", t); },
     [](ProblemDraft& d, std::int64_t v) { d.page_size = v; }, [](const Problem& p) { return json(p.page_size); },
     [](const json& p) {
       return int_at(p, "pages", 1) > 1 ? "ps=" + number_or_minus(p, "page_size") : std::string();
     },
     [](const json& p) { return "ps" + number_or_minus(p, "page_size"); }},
    {"kv_layout", "--kv_layout,--kv-layout", "contiguous | paged (list allowed)", "contiguous", "", false,
     AxisType::word, 2, parse_layouts,
     [](ProblemDraft& d, std::int64_t v) { d.kv_layout = static_cast<KvLayout>(v); },
     [](const Problem& p) { return json(kv_layout_name(p.kv_layout)); },
     [](const json& p) { return str_at(p, "kv_layout", "?"); }, [](const json& p) { return str_at(p, "kv_layout", "?"); }},
    {"dtype", "--dtype", "fp16 | bf16 (list allowed)", "fp16", "", false, AxisType::word, 0, parse_dtypes,
     [](ProblemDraft& d, std::int64_t v) { d.dtype = static_cast<DType>(v); },
     [](const Problem& p) { return json(dtype_name(p.dtype)); }, [](const json& p) { return str_at(p, "dtype", "?"); },
     [](const json& p) { return str_at(p, "dtype", "?"); }},
    {"causal", "--causal", "causal mask (--causal alone: true; --causal=false,true: both)", "false", "", true,
     AxisType::boolean, 1, parse_causal, [](ProblemDraft& d, std::int64_t v) { d.causal = v != 0; },
     [](const Problem& p) { return json(p.causal); },
     [](const json& p) { return bool_at(p, "causal") ? std::string("causal") : std::string(); },
     [](const json& p) { return std::string(bool_at(p, "causal") ? "causal" : "full"); }},
};

std::string join_fragments(const json& problem, std::string (*ProblemAxis::*fragment)(const json&), const char* sep,
                           bool skip_empty) {
  std::string s;
  bool first = true;
  for (const ProblemAxis& a : kAxes) {
    std::string f = (a.*fragment)(problem);
    if (skip_empty && f.empty()) continue;
    if (!first) s += sep;
    s += f;
    first = false;
  }
  return s;
}

const char* type_words(AxisType t) {
  switch (t) {
    case AxisType::integer: return "a whole number";
    case AxisType::word: return "a string";
    case AxisType::boolean: return "true or false";
  }
  return "?";
}

bool has_type(const json& v, AxisType t) {
  switch (t) {
    case AxisType::integer: return v.is_number_integer();
    case AxisType::word: return v.is_string();
    case AxisType::boolean: return v.is_boolean();
  }
  return false;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return std::to_string(v.get<long long>());
}

}  // namespace

Problem ProblemDraft::make() const {
  return make_problem(batch, heads, seq_len, head_dim, pages, page_size, kv_layout, dtype, causal);
}

const std::vector<ProblemAxis>& problem_axes() { return kAxes; }

const ProblemAxis* find_problem_axis(const std::string& name) {
  for (const ProblemAxis& a : kAxes)
    if (name == a.name) return &a;
  return nullptr;
}

json problem_to_json(const Problem& p) {
  json j = json::object();
  for (const ProblemAxis& a : kAxes) j[a.name] = a.to_json(p);
  // Not an axis: how the user spelled the page count (pages when it was given as page_size).
  j["pages_requested"] = p.pages_requested ? p.pages_requested : p.pages;
  return j;
}

std::string problem_label(const Problem& p) { return join_fragments(problem_to_json(p), &ProblemAxis::label, " ", true); }

std::string problem_key(const Problem& p) {
  // json objects keep keys sorted, so dump() is canonical; pages_requested is how the page count was
  // spelled, not part of the problem (Problem::operator== ignores it too).
  json k = problem_to_json(p);
  k.erase("pages_requested");
  return k.dump();
}

std::string problem_cache_key_of_json(const json& problem) {
  return join_fragments(problem, &ProblemAxis::cache_key, "_", false);
}

std::vector<std::string> problem_csv_columns() {
  std::vector<std::string> out;
  for (const ProblemAxis& a : kAxes) out.push_back(a.name);
  return out;
}

std::vector<std::string> problem_csv_cells(const Problem& p) {
  const json problem = problem_to_json(p);
  std::vector<std::string> out;
  for (const ProblemAxis& a : kAxes) {
    switch (a.type) {
      case AxisType::integer: {
        std::int64_t v = int_at(problem, a.name, -1);
        out.push_back(v >= 0 ? std::to_string(v) : std::string());
        break;
      }
      case AxisType::word: out.push_back(str_at(problem, a.name, "")); break;
      case AxisType::boolean: out.push_back(bool_at(problem, a.name) ? "true" : "false"); break;
    }
  }
  return out;
}


Problem problem_from_json(const json& j, const std::string& origin) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: problem must be an object", origin));
  ProblemDraft d;
  for (const ProblemAxis& a : kAxes) {
    // An axis that another present axis stands in for is derived from it (pages from page_size).
    bool replaced = false;
    for (const ProblemAxis& b : kAxes) replaced = replaced || (b.replaces == std::string(a.name) && j.contains(b.name));
    if (replaced) continue;
    auto it = j.find(a.name);
    if (it == j.end()) {
      if (*a.default_text == '\0') continue;  // an optional axis
      throw UsageError(fmt::format("{}: problem.{} is missing", origin, a.name));
    }
    if (!has_type(*it, a.type))
      throw UsageError(fmt::format("{}: problem.{} must be {}", origin, a.name, type_words(a.type)));
    std::vector<std::int64_t> codes;
    try {
      codes = a.parse(value_text(*it));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: problem.{}: {}", origin, a.name, e.what()));
    }
    if (codes.size() != 1) throw UsageError(fmt::format("{}: problem.{} must be one value", origin, a.name));
    a.apply(d, codes[0]);
  }
  Problem p;
  try {
    p = d.make();
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: problem: {}", origin, e.what()));
  }
  auto pages = j.find("pages");
  if (pages != j.end() && (!pages->is_number_integer() || pages->get<std::int64_t>() != p.pages))
    throw UsageError(fmt::format("{}: problem.pages does not match seq_len={} and page_size={} ({} pages)", origin,
                                 p.seq_len, p.page_size, p.pages));
  auto requested = j.find("pages_requested");
  if (requested != j.end()) {
    if (!requested->is_number_integer() || requested->get<std::int64_t>() < 1)
      throw UsageError(fmt::format("{}: problem.pages_requested must be a positive whole number", origin));
    p.pages_requested = requested->get<std::int64_t>();
  }
  return p;
}

}  // namespace ab
