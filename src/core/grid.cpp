// Grid expansion (the product of the axis table) and suite loading.
#include "core/grid.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/axis.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "core/problem_axes.hpp"
#include "core/text_excerpt.hpp"

namespace ab {

GridSpec& GridSpec::set(const std::string& axis, const std::string& value) {
  if (!find_problem_axis(axis)) throw UsageError(fmt::format("unknown problem axis '{}'", axis));
  text[axis] = value;
  return *this;
}

std::vector<Problem> expand_grid(const GridSpec& spec, std::vector<std::string>* notes) {
  const std::vector<ProblemAxis>& axes = problem_axes();
  // Each axis's values, parsed in table order (so the first malformed axis is the one reported).
  struct Active {
    const ProblemAxis* axis;
    std::vector<std::int64_t> codes;
  };
  std::vector<Active> active;
  for (const ProblemAxis& a : axes) {
    bool replaced = false;
    for (const ProblemAxis& b : axes)
      replaced = replaced || (b.replaces == std::string(a.name) && spec.text.count(b.name));
    if (replaced) continue;
    auto it = spec.text.find(a.name);
    std::string text = it != spec.text.end() ? it->second : a.default_text;
    if (it == spec.text.end() && text.empty()) continue;  // an axis that is off unless given
    active.push_back({&a, a.parse(text)});
  }
  double total = 1;  // in floating point: a product of eight axis lengths can pass 2^64
  for (const Active& a : active) total *= static_cast<double>(a.codes.size());
  if (total > 100000) throw UsageError(fmt::format("grid has {:.0f} points; the limit is 100000", total));
  std::stable_sort(active.begin(), active.end(), [](const Active& x, const Active& y) { return x.axis->nest < y.axis->nest; });
  // An odometer over the axes, the last (innermost) turning fastest.
  std::vector<Problem> out;
  std::vector<std::size_t> at(active.size(), 0);
  for (;;) {
    ProblemDraft d;
    d.batch_from_lengths = !spec.text.count("batch") && spec.text.count("kv_lens");
    d.notes = notes;
    for (std::size_t i = 0; i < active.size(); ++i) active[i].axis->apply(d, active[i].codes[at[i]]);
    out.push_back(d.make());
    std::size_t i = active.size();
    while (i > 0 && ++at[i - 1] == active[i - 1].codes.size()) at[--i] = 0;
    if (i == 0) break;
  }
  // Distinct axis values can still meet (S=10 with --pages=5,6 gives 5 pages of 2 twice; causal 1,true).
  std::set<std::string> seen;
  for (const Problem& p : out)
    if (!seen.insert(p.label()).second) throw UsageError(fmt::format("the grid has problem {} twice", p.label()));
  return out;
}

std::vector<std::string> suite_search_dirs() {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux: the running binary, links resolved
  if (!ec && exe.has_parent_path())
    dirs.push_back((exe.parent_path().parent_path() / "share" / "attnbench" / "configs").lexically_normal().string());
  dirs.push_back(std::string(ATTNBENCH_SOURCE_DIR) + "/configs");
  dirs.push_back("./configs");
  return dirs;
}

std::string resolve_suite_path(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::error_code ec;  // a name the file system refuses (too long) is simply not a file
  if (fs::exists(name_or_path, ec)) return name_or_path;
  if (name_or_path.find('/') == std::string::npos && name_or_path.find(".json") == std::string::npos) {
    for (const std::string& dir : suite_search_dirs()) {
      fs::path p = fs::path(dir) / (name_or_path + ".json");
      if (fs::exists(p, ec)) return p.string();
    }
    std::string dirs;
    for (const std::string& d : suite_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
    throw UsageError(fmt::format("config '{}': no suite of that name in {}", name_or_path, dirs));
  }
  return name_or_path;
}

namespace {
// One suite file (a name or a path) into problems.
std::vector<Problem> load_one_suite(const std::string& path_in, std::string* suite_name, const GridSpec* overrides,
                                    std::vector<std::string>* notes) {
  std::string path = resolve_suite_path(path_in);
  nlohmann::json j;
  try {
    j = read_json_file(path);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("config {}", e.what()));
  }
  return suite_from_json(j, path, suite_name, overrides, notes);
}

}  // namespace

std::vector<std::string> suite_names(const std::string& text) {
  std::error_code ec;
  if (text.find(',') == std::string::npos || std::filesystem::exists(text, ec)) return {text};
  std::vector<std::string> names;
  std::size_t at = 0;
  while (true) {
    std::size_t comma = text.find(',', at);
    std::string name = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (name.empty()) throw UsageError(fmt::format("config '{}': an empty suite name in the list", text));
    names.push_back(name);
    if (comma == std::string::npos) return names;
    at = comma + 1;
  }
}

std::vector<Problem> load_suite(const std::string& text, std::string* suite_name, const GridSpec* overrides,
                                std::vector<std::string>* notes) {
  const std::vector<std::string> names = suite_names(text);
  if (names.size() == 1) return load_one_suite(names.front(), suite_name, overrides, notes);
  std::vector<Problem> out;
  std::set<std::string> seen;
  std::string joined;
  std::size_t repeated = 0;
  for (const std::string& name : names) {
    std::string one;
    for (Problem& p : load_one_suite(name, &one, overrides, notes)) {
      if (seen.insert(p.label()).second) out.push_back(std::move(p));
      else ++repeated;
    }
    joined += (joined.empty() ? "" : "+") + one;
  }
  if (out.size() > 100000) throw UsageError(fmt::format("config '{}': over 100000 problems; the limit is 100000", text));
  if (suite_name) *suite_name = joined;
  if (repeated && notes)
    notes->push_back(fmt::format("{} problems are in more than one of the suites {} and run once", repeated, joined));
  return out;
}

namespace {
// The command line's axes replace the suite grid's; an axis of the grid that stands in for a replaced one
// (page_size for pages, kv_lens for seq_len) gives way to it.
void apply_overrides(GridSpec& spec, const GridSpec& overrides) {
  for (const auto& [axis, text] : overrides.text) {
    spec.text[axis] = text;
    for (const ProblemAxis& b : problem_axes())
      if (b.replaces == axis && !overrides.text.count(b.name)) spec.text.erase(b.name);
  }
}
}  // namespace

std::vector<Problem> suite_from_json(const nlohmann::json& j, const std::string& path, std::string* suite_name,
                                     const GridSpec* overrides, std::vector<std::string>* notes) {
  auto text_of = [&](const nlohmann::json& v, const char* key) -> std::string {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_array()) {
      const ProblemAxis* axis = find_problem_axis(key);
      const char sep = axis ? axis->list_separator : ',';
      std::string s;
      for (const auto& e : v) {
        if (!s.empty()) s += sep;
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
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "name" && it.key() != "description" && it.key() != "comment" && it.key() != "grids" &&
        it.key() != "plugins" && it.key() != "peers")  // plugins, peers: read by cli/plugin_flags, cli/peer_flags
      throw UsageError(fmt::format("config '{}': unknown top-level key {} (a suite has name, description, comment, "
                                   "plugins, peers and grids)", path, quoted_excerpt(it.key())));
  if (j.contains("name") && !j["name"].is_string())
    throw UsageError(fmt::format("config '{}': 'name' must be a string", path));
  if (suite_name) *suite_name = j.value("name", std::filesystem::path(path).stem().string());
  std::vector<Problem> out;
  std::map<std::string, std::size_t> grid_of;  // a problem's label (as expand_grid keys it) -> its first grid, from 1
  std::size_t grid_no = 0, merged = 0;
  for (const auto& g : j["grids"]) {
    ++grid_no;
    if (!g.is_object()) throw UsageError(fmt::format("config '{}': each grid must be an object", path));
    GridSpec spec;
    for (auto it = g.begin(); it != g.end(); ++it) {
      if (it.key() == "comment") continue;
      if (!find_problem_axis(it.key())) throw UsageError(fmt::format("config '{}': unknown key '{}'", path, it.key()));
      spec.text[it.key()] = text_of(it.value(), it.key().c_str());
    }
    const bool overridden = overrides && !overrides->text.empty();
    if (overridden) apply_overrides(spec, *overrides);
    try {
      for (Problem& p : expand_grid(spec, notes)) {
        auto [at, fresh] = grid_of.emplace(p.label(), grid_no);
        if (fresh) {
          out.push_back(std::move(p));
        } else if (overridden) {
          ++merged;  // the overrides made two of the suite's problems one
        } else {
          throw UsageError(fmt::format("grids {} and {} both hold {} (a suite runs each problem once)", at->second,
                                       grid_no, p.label()));
        }
      }
      if (out.size() > 100000) throw UsageError(fmt::format("the suite has over 100000 problems; the limit is 100000"));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("config '{}': {}", path, e.what()));
    }
  }
  if (merged && notes)
    notes->push_back(fmt::format("{} of the suite's problems became identical under the command line's axes and run once",
                                 merged));
  return out;
}

}  // namespace ab
