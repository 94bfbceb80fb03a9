// Problem label, key, JSON and CSV cells (moved from the runner, report_view and the CSV printer).
#include "core/problem_axes.hpp"

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/errors.hpp"

namespace ab {

std::string problem_label(const Problem& p) { return p.label(); }

std::string problem_key(const Problem& p) {
  // Every field but pages_requested (how the user spelled the page count; Problem::operator== ignores it);
  // json objects keep their keys sorted, so dump() is canonical.
  nlohmann::json k = problem_to_json(p);
  k.erase("pages_requested");
  return k.dump();
}

nlohmann::json problem_to_json(const Problem& p) {
  return {{"batch", p.batch},
          {"heads", p.heads},
          {"seq_len", p.seq_len},
          {"head_dim", p.head_dim},
          {"pages", p.pages},
          {"page_size", p.page_size},
          {"pages_requested", p.pages_requested ? p.pages_requested : p.pages},
          {"kv_layout", kv_layout_name(p.kv_layout)},
          {"dtype", dtype_name(p.dtype)},
          {"causal", p.causal}};
}

namespace {

std::int64_t need_int(const nlohmann::json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer())
    throw UsageError(fmt::format("{}: problem.{} must be an integer", origin, key));
  return it->get<std::int64_t>();
}

std::string need_string(const nlohmann::json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) throw UsageError(fmt::format("{}: problem.{} must be a string", origin, key));
  return it->get<std::string>();
}

}  // namespace

Problem problem_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: problem must be an object", origin));
  Problem p;
  p.batch = need_int(j, "batch", origin);
  p.heads = need_int(j, "heads", origin);
  p.seq_len = need_int(j, "seq_len", origin);
  p.head_dim = need_int(j, "head_dim", origin);
  p.pages = j.contains("pages") ? need_int(j, "pages", origin) : 1;
  p.page_size = j.contains("page_size") ? need_int(j, "page_size", origin) : p.seq_len;
  p.pages_requested = j.contains("pages_requested") ? need_int(j, "pages_requested", origin) : p.pages;
  std::string layout = j.contains("kv_layout") ? need_string(j, "kv_layout", origin) : "contiguous";
  if (!parse_kv_layout(layout, &p.kv_layout))
    throw UsageError(fmt::format("{}: problem.kv_layout '{}' is not contiguous or paged", origin, layout));
  std::string dtype = need_string(j, "dtype", origin);
  auto dt = parse_dtype(dtype);
  if (!dt) throw UsageError(fmt::format("{}: problem.dtype '{}' is not a known dtype", origin, dtype));
  p.dtype = *dt;
  auto c = j.find("causal");
  if (c != j.end() && !c->is_boolean()) throw UsageError(fmt::format("{}: problem.causal must be true or false", origin));
  p.causal = c != j.end() && c->get<bool>();
  return p;
}

std::vector<std::string> problem_csv_columns() {
  return {"batch", "heads", "seq_len", "head_dim", "pages", "page_size", "kv_layout", "dtype", "causal"};
}

std::vector<std::string> problem_csv_cells(const Problem& p) {
  return {std::to_string(p.batch),    std::to_string(p.heads),     std::to_string(p.seq_len),
          std::to_string(p.head_dim), std::to_string(p.pages),     std::to_string(p.page_size),
          kv_layout_name(p.kv_layout), dtype_name(p.dtype),        p.causal ? "true" : "false"};
}

}  // namespace ab
