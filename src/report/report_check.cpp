// Field-type checks of a report at read time.
#include "report/report_check.hpp"

#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

namespace {

using json = nlohmann::json;

enum class T { object, array, string, boolean, integer, number, number_or_null };

bool has_type(const json& v, T t) {
  switch (t) {
    case T::object: return v.is_object();
    case T::array: return v.is_array();
    case T::string: return v.is_string();
    case T::boolean: return v.is_boolean();
    case T::integer: return v.is_number_integer();
    case T::number: return v.is_number();
    case T::number_or_null: return v.is_number() || v.is_null();
  }
  return false;
}

const char* type_words(T t) {
  switch (t) {
    case T::object: return "an object";
    case T::array: return "a list";
    case T::string: return "a string";
    case T::boolean: return "true or false";
    case T::integer: return "an integer";
    case T::number: return "a number";
    case T::number_or_null: return "a number or null";
  }
  return "?";
}

struct Checker {
  const std::string& origin;
  // Each listed field of `obj` (when present) must have its type; `where` prefixes the field's path.
  void fields(const json& obj, const std::string& where, std::initializer_list<std::pair<const char*, T>> spec) const {
    for (const auto& [name, t] : spec) {
      auto it = obj.find(name);
      if (it == obj.end() || has_type(*it, t)) continue;
      throw UsageError(fmt::format("{}: {}{} must be {}", origin, where, name, type_words(t)));
    }
  }
  const json* object_field(const json& obj, const char* name, const std::string& where) const {
    auto it = obj.find(name);
    if (it == obj.end()) return nullptr;
    if (!it->is_object()) throw UsageError(fmt::format("{}: {}{} must be an object", origin, where, name));
    return &*it;
  }
};

}  // namespace

void check_report_types(const json& doc, const std::string& origin) {
  Checker c{origin};
  c.fields(doc, "", {{"command", T::string}, {"created", T::string}, {"warnings", T::array}, {"results", T::array}});
  if (!doc.contains("results")) throw UsageError(fmt::format("{}: no 'results' list", origin));
  if (const json* t = c.object_field(doc, "tool", ""))
    c.fields(*t, "tool.", {{"name", T::string}, {"version", T::string}, {"git", T::string}});
  if (const json* d = c.object_field(doc, "device", ""))
    c.fields(*d, "device.", {{"name", T::string}, {"backend", T::string}, {"cc", T::string}, {"sm_count", T::integer},
                             {"driver", T::string}, {"cuda_runtime", T::string}});
  if (const json* s = c.object_field(doc, "settings", ""))
    c.fields(*s, "settings.", {{"hot", T::boolean}, {"verify", T::boolean}, {"timer", T::string}, {"warmup", T::integer},
                               {"min_samples", T::integer}, {"max_noise", T::number}});
  if (doc.contains("warnings"))
    for (std::size_t i = 0; i < doc["warnings"].size(); ++i)
      if (!doc["warnings"][i].is_string())
        throw UsageError(fmt::format("{}: warnings[{}] must be a string", origin, i));
  const json& results = doc["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& row = results[i];
    std::string at = fmt::format("results[{}]", i);
    if (!row.is_object()) throw UsageError(fmt::format("{}: {} must be an object", origin, at));
    at += ".";
    c.fields(row, at, {{"strategy", T::string}, {"status", T::string}, {"reason", T::string},
                       {"tflops", T::number_or_null}, {"gbps", T::number_or_null}});
    if (const json* p = c.object_field(row, "problem", at))
      c.fields(*p, at + "problem.", {{"batch", T::integer}, {"heads", T::integer}, {"seq_len", T::integer},
                                     {"head_dim", T::integer}, {"pages", T::integer}, {"page_size", T::integer},
                                     {"pages_requested", T::integer}, {"kv_layout", T::string},
                                     {"dtype", T::string}, {"causal", T::boolean}});
    if (const json* t = c.object_field(row, "time_ms", at))
      c.fields(*t, at + "time_ms.", {{"median", T::number_or_null}, {"noise", T::number_or_null},
                                     {"samples", T::integer}});
    if (const json* l = c.object_field(row, "launches", at)) {
      c.fields(*l, at + "launches.", {{"match", T::boolean}});
      if (const json* e = c.object_field(*l, "expected", at + "launches."))
        c.fields(*e, at + "launches.expected.", {{"gemm", T::integer}, {"kernels", T::integer}, {"total", T::integer}});
      if (const json* m = c.object_field(*l, "measured", at + "launches."))
        c.fields(*m, at + "launches.measured.", {{"kernels", T::integer}});
    }
    if (const json* v = c.object_field(row, "verify", at))
      c.fields(*v, at + "verify.", {{"passed", T::boolean}, {"rel_l2_err", T::number_or_null}});
  }
}

}  // namespace ab
