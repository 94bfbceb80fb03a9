// The table of problem axes and every fact derived from it: label, keys, problem JSON, CSV cells.
#include "core/problem_axes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <memory>
#include <mutex>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/kv_lengths.hpp"
#include "core/text_excerpt.hpp"

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

// A word axis's text: each word of the list through `parse` (an optional enum), else one line naming the axis,
// what the word should be and the choices.
template <class Parse>
std::vector<std::int64_t> parse_words(const char* axis, const std::string& text, Parse parse, const char* what,
                                      const char* choices) {
  std::vector<std::int64_t> out;
  for (const auto& w : split_list(axis, text)) {
    const auto v = parse(w);
    if (!v) throw UsageError(fmt::format("--{}: unknown {} '{}' ({})", axis, what, w, choices));
    out.push_back(static_cast<std::int64_t>(*v));
  }
  return out;
}

std::vector<std::int64_t> parse_dtypes(const std::string& text) {
  return parse_words("dtype", text, parse_dtype, "dtype", "fp16, bf16");
}
std::vector<std::int64_t> parse_kv_formats(const std::string& text) {
  return parse_words("kv_dtype", text, parse_kv_format, "K/V cache format", "fp8_e4m3, or auto: the --dtype");
}
std::vector<std::int64_t> parse_kv_scales(const std::string& text) {
  return parse_words("kv_scale", text, parse_kv_scale, "scale granularity", "tensor, head");
}

// The K/V cache's fragments: none for the --dtype itself; "kv=e4m3" (label) or "kve4m3" (cache key), with
// "/head" for per-head scales.
std::string kv_format_fragment(const json& p, const char* prefix) {
  if (str_at(p, "kv_dtype", "") != "fp8_e4m3") return {};
  return std::string(prefix) + "e4m3" + (str_at(p, "kv_scale", "tensor") == "head" ? "/head" : "");
}

// A boolean axis's text (--causal, --sinks): true/false words, a list for both.
std::vector<std::int64_t> parse_boolean(const char* name, const std::string& text) {
  std::vector<std::int64_t> out;
  for (const std::string& w : split_list(name, text)) {
    if (w == "true" || w == "1" || w == "on" || w == "yes") out.push_back(1);
    else if (w == "false" || w == "0" || w == "off" || w == "no") out.push_back(0);
    else throw UsageError(fmt::format("--{}: '{}' is not true or false", name, w));
  }
  return out;
}

std::string number_or_minus(const json& p, const char* key) { return std::to_string(int_at(p, key, -1)); }

// An optional variant's value (window, softcap): every value given must be positive (0 would read as "none").
std::vector<std::int64_t> parse_positive(const char* axis, const char* what, const std::string& text) {
  std::vector<std::int64_t> v = parse_axis(axis, text);
  for (std::int64_t x : v)
    if (x <= 0) throw UsageError(fmt::format("--{}: {} is not a positive {}", axis, x, what));
  return v;
}
// "win=128" / "win128" where the problem has a window (the label's prefix, the key's), else nothing; the same for
// the soft-cap.
std::string variant_fragment(const json& p, const char* key, const char* prefix) {
  const std::int64_t v = int_at(p, key, 0);
  return v > 0 ? prefix + std::to_string(v) : std::string();
}

// Ragged-length specs, interned for the life of the process: the axis machinery carries whole numbers, so a
// spec travels through the grid as its index here.
std::vector<std::unique_ptr<KvLengthsSpec>>& interned_specs() {
  static std::vector<std::unique_ptr<KvLengthsSpec>> specs;
  return specs;
}
std::mutex& interned_mutex() {
  static std::mutex m;
  return m;
}
std::int64_t intern_spec(KvLengthsSpec s) {
  std::lock_guard<std::mutex> lock(interned_mutex());
  auto& v = interned_specs();
  v.push_back(std::make_unique<KvLengthsSpec>(std::move(s)));
  return static_cast<std::int64_t>(v.size()) - 1;
}
const KvLengthsSpec& spec_at(std::int64_t code) {
  std::lock_guard<std::mutex> lock(interned_mutex());
  return *interned_specs().at(static_cast<std::size_t>(code));
}

// Length specs (kv_lens, q_lens) are separated by ';' (a list spec holds commas): "uniform:512:8192;list:7,900".
std::vector<std::int64_t> parse_lengths(const char* axis, const std::string& text) {
  std::vector<std::int64_t> out;
  std::vector<std::string> seen;
  std::string cur;
  auto flush = [&] {
    std::size_t a = cur.find_first_not_of(" \t"), b = cur.find_last_not_of(" \t");
    std::string t = a == std::string::npos ? std::string() : cur.substr(a, b - a + 1);
    if (t.empty()) throw UsageError(fmt::format("--{}: empty spec in '{}'", axis, text));
    for (const std::string& s : seen)
      if (s == t) throw UsageError(fmt::format("--{}: '{}' is listed twice", axis, t));
    seen.push_back(t);
    out.push_back(intern_spec(parse_kv_lengths_spec(t, axis)));
    cur.clear();
  };
  for (char c : text) {
    if (c == ';') flush();
    else cur += c;
  }
  flush();
  return out;
}

// A length axis's recorded values: "kv_lens_values" for kv_lens, "q_lens_values" for q_lens.
std::string values_key(const char* axis) { return std::string(axis) + "_values"; }

bool has_lengths(const json& p, const char* axis) {
  return p.is_object() && p.contains(values_key(axis)) && p[values_key(axis)].is_array();
}

std::vector<std::int64_t> lengths_of(const json& p, const char* axis) {
  std::vector<std::int64_t> out;
  if (!has_lengths(p, axis)) return out;
  for (const json& v : p[values_key(axis)]) out.push_back(v.is_number_integer() ? v.get<std::int64_t>() : -1);
  return out;
}

// "lens=uniform:512:8192:1"; a list or file by its size and digest: "lens=list[64]#1a2b3c4d" (`prefix` "lens"
// for kv_lens, "qlens" for q_lens).
std::string lengths_label(const json& p, const char* axis, const char* prefix) {
  if (!has_lengths(p, axis)) return "";
  std::string spec = str_at(p, axis, "list");
  if (spec.rfind("uniform:", 0) == 0) return std::string(prefix) + "=" + spec;
  std::vector<std::int64_t> v = lengths_of(p, axis);
  std::string kind = spec.rfind("file:", 0) == 0 ? spec : std::string("list");
  return fmt::format("{}={}[{}]#{}", prefix, kind, v.size(), kv_lengths_digest(v));
}

std::string lengths_cache_key(const json& p, const char* axis, const char* prefix) {
  if (!has_lengths(p, axis)) return "";
  return std::string(prefix) + "#" + kv_lengths_digest(lengths_of(p, axis));
}

// KV heads and q_len appear in labels and keys only where they differ from self-attention.
std::string kv_heads_fragment(const json& p, const char* prefix) {
  std::int64_t kvh = int_at(p, "kv_heads", -1), h = int_at(p, "heads", -1);
  return kvh < 0 || kvh == h ? std::string() : prefix + std::to_string(kvh);
}
std::string q_len_fragment(const json& p, const char* prefix) {
  std::int64_t q = int_at(p, "q_len", -1), s = int_at(p, "seq_len", -1);
  return q < 0 || q == s ? std::string() : prefix + std::to_string(q);
}

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
    {"kv_heads", "--kv_heads,--kv-heads",
     "KV heads shared by groups of query heads (GQA; 1 is MQA; default: heads; must divide heads)", "", "", false,
     AxisType::integer, 5, [](const std::string& t) { return parse_axis("kv_heads", t); },
     [](ProblemDraft& d, std::int64_t v) { d.kv_heads = v; }, [](const Problem& p) { return json(p.kv_heads); },
     [](const json& p) { return kv_heads_fragment(p, "KVH="); }, [](const json& p) { return kv_heads_fragment(p, "KVH"); }},
    {"seq_len", "--seq_len,--seq-len,-s", "sequence length (value, list or range)", "512", "", false,
     AxisType::integer, 6, [](const std::string& t) { return parse_axis("seq_len", t); },
     [](ProblemDraft& d, std::int64_t v) { d.seq_len = v; }, [](const Problem& p) { return json(p.seq_len); },
     [](const json& p) { return "S=" + number_or_minus(p, "seq_len"); },
     [](const json& p) { return "S" + number_or_minus(p, "seq_len"); }},
    {"q_len", "--q_len,--q-len",
     "queries per sequence, the last q_len of its KV positions (decode: 1; chunked prefill: the chunk; default: seq_len)",
     "", "", false, AxisType::integer, 6, [](const std::string& t) { return parse_axis("q_len", t); },
     [](ProblemDraft& d, std::int64_t v) { d.q_len = v; }, [](const Problem& p) { return json(p.q_len); },
     [](const json& p) { return q_len_fragment(p, "q="); }, [](const json& p) { return q_len_fragment(p, "q"); }},
    {"kv_lens", "--kv_lens,--kv-lens",
     "ragged batch: per-sequence KV lengths, list:L1,L2,... (one per sequence), uniform:LO:HI[:SEED] or file:PATH "
     "(one a line); stands in for seq_len (the longest); several specs separated by ';'",
     "", "seq_len", false, AxisType::word, 6, [](const std::string& t) { return parse_lengths("kv_lens", t); },
     [](ProblemDraft& d, std::int64_t v) { d.kv_lens_code = v; },
     [](const Problem& p) { return p.ragged() ? json(p.kv_lens_spec) : json(); },
     [](const json& p) { return lengths_label(p, "kv_lens", "lens"); },
     [](const json& p) { return lengths_cache_key(p, "kv_lens", "lens"); }, ';'},
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
     AxisType::boolean, 1, [](const std::string& t) { return parse_boolean("causal", t); },
     [](ProblemDraft& d, std::int64_t v) { d.causal = v != 0; },
     [](const Problem& p) { return json(p.causal); },
     [](const json& p) { return bool_at(p, "causal") ? std::string("causal") : std::string(); },
     [](const json& p) { return std::string(bool_at(p, "causal") ? "causal" : "full"); }},
    {"window", "--window",
     "sliding window: a query sees at most WINDOW keys before its own position (with or without --causal; "
     "value, list or range; default: none)",
     "", "", false, AxisType::integer, 1,
     [](const std::string& t) { return parse_positive("window", "number of keys", t); },
     [](ProblemDraft& d, std::int64_t v) { d.window = v; },
     [](const Problem& p) { return p.window > 0 ? json(p.window) : json(); },
     [](const json& p) { return variant_fragment(p, "window", "win="); },
     [](const json& p) { return variant_fragment(p, "window", "win"); }},
    {"softcap", "--softcap",
     "logit soft-capping: scaled scores s become C*tanh(s/C) before the softmax (Gemma 2: 50; value or list; "
     "default: none)",
     "", "", false, AxisType::integer, 1,
     [](const std::string& t) { return parse_positive("softcap", "cap", t); },
     [](ProblemDraft& d, std::int64_t v) { d.softcap = v; },
     [](const Problem& p) { return p.softcap > 0 ? json(p.softcap) : json(); },
     [](const json& p) { return variant_fragment(p, "softcap", "cap="); },
     [](const json& p) { return variant_fragment(p, "softcap", "cap"); }},
    {"sinks", "--sinks",
     "attention sinks: a per-head logit in each softmax's denominator (gpt-oss), seeded from --seed "
     "(--sinks alone: true; --sinks=false,true: both; default: none)",
     "", "", true, AxisType::boolean, 1, [](const std::string& t) { return parse_boolean("sinks", t); },
     [](ProblemDraft& d, std::int64_t v) { d.sinks = v != 0; },
     [](const Problem& p) { return p.sinks ? json(true) : json(); },
     [](const json& p) { return bool_at(p, "sinks") ? std::string("sinks") : std::string(); },
     [](const json& p) { return bool_at(p, "sinks") ? std::string("sinks") : std::string(); }},    // Last, as the variants before it: the CSV columns of earlier reports keep their positions.
    {"head_dim_v", "--head_dim_v,--head-dim-v",
     "value head dimension: V and O this wide, Q and K --head_dim (MLA decode: --head_dim=576 --head_dim_v=512; "
     "value, list or range; default: head_dim)",
     "", "", false, AxisType::integer, 3,
     [](const std::string& t) { return parse_positive("head_dim_v", "head dimension", t); },
     [](ProblemDraft& d, std::int64_t v) { d.head_dim_v = v; },
     [](const Problem& p) { return p.split_head_dim() ? json(p.head_dim_v) : json(); },
     [](const json& p) { return variant_fragment(p, "head_dim_v", "Dv="); },
     [](const json& p) { return variant_fragment(p, "head_dim_v", "Dv"); }},
    // Last: the CSV columns of earlier reports keep their positions.
    {"q_lens", "--q_lens,--q-lens",
     "mixed batch: per-sequence query counts, each the last of its KV positions (decode 1, draft tokens, prefill "
     "chunks), list:Q1,Q2,... (one per sequence), uniform:LO:HI[:SEED] or file:PATH; q_len is their most; several "
     "specs separated by ';'",
     "", "", false, AxisType::word, 6, [](const std::string& t) { return parse_lengths("q_lens", t); },
     [](ProblemDraft& d, std::int64_t v) { d.q_lens_code = v; },
     [](const Problem& p) { return p.mixed() ? json(p.q_lens_spec) : json(); },
     [](const json& p) { return lengths_label(p, "q_lens", "qlens"); },
     [](const json& p) { return lengths_cache_key(p, "q_lens", "qlens"); }, ';'},
    // After q_lens for the same reason. The scale's granularity is in the format's fragment ("kv=e4m3/head").
    {"kv_dtype", "--kv_dtype,--kv-dtype",
     "K/V cache storage: fp8_e4m3 (E4M3 with fp32 dequantization scales, --kv_scale; Q and O stay --dtype), or auto: "
     "the --dtype itself (list allowed; default: auto)",
     "", "", false, AxisType::word, 0, parse_kv_formats,
     [](ProblemDraft& d, std::int64_t v) { d.kv_format = static_cast<KvFormat>(v); },
     [](const Problem& p) { return p.fp8_kv() ? json(kv_format_name(p.kv_format)) : json(); },
     [](const json& p) { return kv_format_fragment(p, "kv="); },
     [](const json& p) { return kv_format_fragment(p, "kv"); }},
    {"kv_scale", "--kv_scale,--kv-scale",
     "an FP8 K/V cache's scales: one per tensor (K and V) or one per KV head (default: tensor)",
     "", "", false, AxisType::word, 0, parse_kv_scales,
     [](ProblemDraft& d, std::int64_t v) { d.kv_scale = static_cast<KvScale>(v); },
     [](const Problem& p) { return p.fp8_kv() ? json(kv_scale_name(p.kv_scale)) : json(); },
     [](const json&) { return std::string(); }, [](const json&) { return std::string(); }},
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
  ProblemSpec s = *this;
  if (q_lens_code >= 0) {
    const KvLengthsSpec& q = spec_at(q_lens_code);
    s.q_lens = kv_lengths_for(q, s.batch);
    s.q_lens_spec = q.text;
  }
  if (kv_lens_code < 0) return make_problem(s);
  const KvLengthsSpec& spec = spec_at(kv_lens_code);
  auto note = [this](std::string text) {
    if (notes && std::find(notes->begin(), notes->end(), text) == notes->end()) notes->push_back(std::move(text));
  };
  if (batch_from_lengths && spec.kind != KvLengthsSpec::Kind::uniform) {
    s.batch = static_cast<std::int64_t>(spec.values.size());
    note(fmt::format("--batch not given: batch {} is the number of lengths in --kv_lens '{}'", s.batch,
                     escaped_text(spec.text, 80)));
  } else if (spec.kind == KvLengthsSpec::Kind::file && static_cast<std::int64_t>(spec.values.size()) > s.batch) {
    note(fmt::format("--kv_lens: '{}' holds {} lengths; batch {} takes the first {}", escaped_text(spec.text, 80),
                     spec.values.size(), s.batch, s.batch));
  }
  s.kv_lens = kv_lengths_for(spec, s.batch);
  s.kv_lens_spec = spec.text;
  return make_problem(s);
}

const std::vector<ProblemAxis>& problem_axes() { return kAxes; }

const ProblemAxis* find_problem_axis(const std::string& name) {
  for (const ProblemAxis& a : kAxes)
    if (name == a.name) return &a;
  return nullptr;
}

json problem_to_json(const Problem& p) {
  json j = json::object();
  for (const ProblemAxis& a : kAxes) {
    json v = a.to_json(p);
    if (!v.is_null()) j[a.name] = std::move(v);  // an axis that is off (kv_lens of an even batch) is left out
  }
  // Not axes: how the user spelled the page count (pages when it was given as page_size), and a ragged
  // batch's lengths themselves.
  j["pages_requested"] = p.pages_requested ? p.pages_requested : p.pages;
  if (p.ragged()) j["kv_lens_values"] = p.kv_lens;
  if (p.mixed()) j["q_lens_values"] = p.q_lens;
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
  return join_fragments(problem, &ProblemAxis::cache_key, "_", true);
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
      case AxisType::boolean:  // absent (a variant the problem does not have: sinks): an empty cell
        out.push_back(!problem.contains(a.name) ? std::string() : bool_at(problem, a.name) ? "true" : "false");
        break;
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
    if (it == j.end() || (it->is_null() && *a.default_text == '\0')) {
      if (*a.default_text == '\0') continue;  // an optional axis
      throw UsageError(fmt::format("{}: problem.{} is missing", origin, a.name));
    }
    const std::string name = a.name;
    if ((name == "kv_lens" || name == "q_lens") && j.contains(values_key(a.name))) {
      // The lengths as recorded: the run repeats even where the spec's file is gone.
      if (!it->is_string()) throw UsageError(fmt::format("{}: problem.{} must be a string", origin, name));
      const json& values = j[values_key(a.name)];
      if (!values.is_array() || values.empty())
        throw UsageError(fmt::format("{}: problem.{}_values must be a list of lengths", origin, name));
      std::vector<std::int64_t>& into = name == "kv_lens" ? d.kv_lens : d.q_lens;
      for (const json& v : values) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
          throw UsageError(fmt::format("{}: problem.{}_values must hold positive whole numbers", origin, name));
        into.push_back(v.get<std::int64_t>());
      }
      (name == "kv_lens" ? d.kv_lens_spec : d.q_lens_spec) = it->get<std::string>();
      continue;
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
  auto seq = j.find("seq_len");
  if (p.ragged() && seq != j.end() && (!seq->is_number_integer() || seq->get<std::int64_t>() != p.seq_len))
    throw UsageError(fmt::format("{}: problem.seq_len is not the longest of its kv_lens ({})", origin, p.seq_len));
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
