// Grid expansion and suite loading.
#include "core/grid.hpp"

#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"

namespace ab {

namespace {

std::vector<bool> parse_causal(const std::string& text) {
  std::vector<bool> out;
  for (const std::string& w : split_list("causal", text)) {
    if (w == "true" || w == "1" || w == "on" || w == "yes") out.push_back(true);
    else if (w == "false" || w == "0" || w == "off" || w == "no") out.push_back(false);
    else throw UsageError(fmt::format("--causal: '{}' is not true or false", w));
  }
  return out;
}

}  // namespace

std::vector<Problem> expand_grid(const GridSpec& spec) {
  auto bs = parse_axis("batch", spec.batch);
  auto hs = parse_axis("heads", spec.heads);
  auto ss = parse_axis("seq_len", spec.seq_len);
  auto ds = parse_axis("head_dim", spec.head_dim);
  bool by_page_size = !spec.page_size.empty();
  auto ps = by_page_size ? parse_axis("page_size", spec.page_size) : parse_axis("pages", spec.pages);
  std::vector<KvLayout> layouts;
  for (const auto& w : split_list("kv_layout", spec.kv_layout)) {
    KvLayout l;
    if (!parse_kv_layout(w, &l))
      throw UsageError(fmt::format("--kv_layout: unknown layout '{}' (contiguous, paged)", w));
    layouts.push_back(l);
  }
  std::vector<DType> dtypes;
  for (const auto& w : split_list("dtype", spec.dtype)) {
    auto t = parse_dtype(w);
    if (!t) throw UsageError(fmt::format("--dtype: unknown dtype '{}' (fp16, bf16)", w));
    dtypes.push_back(*t);
  }
  auto causals = parse_causal(spec.causal);
  double total = 1;  // in floating point: a product of eight axis lengths can pass 2^64
  for (std::size_t n : {bs.size(), hs.size(), ss.size(), ds.size(), ps.size(), layouts.size(), dtypes.size(), causals.size()})
    total *= static_cast<double>(n);
  if (total > 100000) throw UsageError(fmt::format("grid has {:.0f} points; the limit is 100000", total));
  std::vector<Problem> out;
  for (DType t : dtypes)
    for (bool c : causals)
      for (KvLayout l : layouts)
        for (auto d : ds)
          for (auto b : bs)
            for (auto h : hs)
              for (auto s : ss)
                for (auto p : ps)
                  out.push_back(make_problem(b, h, s, d, by_page_size ? 0 : p, by_page_size ? p : 0, l, t, c));
  // Distinct axis values can still meet (S=10 with --pages=5,6 gives 5 pages of 2 twice; causal 1,true).
  std::set<std::string> seen;
  for (const Problem& p : out)
    if (!seen.insert(p.label()).second) throw UsageError(fmt::format("the grid has problem {} twice", p.label()));
  return out;
}

std::string resolve_suite_path(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (fs::exists(name_or_path)) return name_or_path;
  if (name_or_path.find('/') == std::string::npos && name_or_path.find(".json") == std::string::npos) {
    for (const std::string& dir : {std::string("configs"), std::string(ATTNBENCH_SOURCE_DIR) + "/configs"}) {
      fs::path p = fs::path(dir) / (name_or_path + ".json");
      if (fs::exists(p)) return p.string();
    }
  }
  return name_or_path;
}

std::vector<Problem> load_suite(const std::string& path_in, std::string* suite_name) {
  std::string path = resolve_suite_path(path_in);
  nlohmann::json j;
  try {
    j = read_json_file(path);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("config {}", e.what()));
  }
  return suite_from_json(j, path, suite_name);
}

std::vector<Problem> suite_from_json(const nlohmann::json& j, const std::string& path, std::string* suite_name) {
  auto text_of = [&](const nlohmann::json& v, const char* key) -> std::string {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_array()) {
      std::string s;
      for (const auto& e : v) {
        if (!s.empty()) s += ",";
        if (e.is_string()) s += e.get<std::string>();
        else if (e.is_number_integer()) s += std::to_string(e.get<long long>());
        else if (e.is_boolean()) s += e.get<bool>() ? "true" : "false";
        else throw UsageError(fmt::format("config '{}': bad element in '{}'", path, key));
      }
      return s;
    }
    throw UsageError(fmt::format("config '{}': '{}' must be a number, string or list", path, key));
  };
  if (!j.is_object() || !j.contains("grids") || !j["grids"].is_array() || j["grids"].empty())
    throw UsageError(fmt::format("config '{}': expected an object with a non-empty 'grids' list", path));
  if (j.contains("name") && !j["name"].is_string())
    throw UsageError(fmt::format("config '{}': 'name' must be a string", path));
  if (suite_name) *suite_name = j.value("name", std::filesystem::path(path).stem().string());
  std::vector<Problem> out;
  for (const auto& g : j["grids"]) {
    if (!g.is_object()) throw UsageError(fmt::format("config '{}': each grid must be an object", path));
    GridSpec spec;
    static const char* known[] = {"batch", "heads", "seq_len", "head_dim", "pages", "page_size",
                                  "kv_layout", "dtype", "causal", "comment"};
    for (auto it = g.begin(); it != g.end(); ++it) {
      bool ok = false;
      for (const char* k : known) ok = ok || it.key() == k;
      if (!ok) throw UsageError(fmt::format("config '{}': unknown key '{}'", path, it.key()));
    }
    if (g.contains("batch")) spec.batch = text_of(g["batch"], "batch");
    if (g.contains("heads")) spec.heads = text_of(g["heads"], "heads");
    if (g.contains("seq_len")) spec.seq_len = text_of(g["seq_len"], "seq_len");
    if (g.contains("head_dim")) spec.head_dim = text_of(g["head_dim"], "head_dim");
    if (g.contains("pages")) spec.pages = text_of(g["pages"], "pages");
    if (g.contains("page_size")) spec.page_size = text_of(g["page_size"], "page_size");
    if (g.contains("kv_layout")) spec.kv_layout = text_of(g["kv_layout"], "kv_layout");
    if (g.contains("dtype")) spec.dtype = text_of(g["dtype"], "dtype");
    if (g.contains("causal")) spec.causal = text_of(g["causal"], "causal");
    try {
      auto part = expand_grid(spec);
      out.insert(out.end(), part.begin(), part.end());
      if (out.size() > 100000) throw UsageError(fmt::format("the suite has over 100000 problems; the limit is 100000"));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("config '{}': {}", path, e.what()));
    }
  }
  return out;
}

}  // namespace ab
