// `attnbench list`: strategies with their launch contracts, backends, devices, timers, the fused tiles compiled
// per head_dim on this machine's backend, suites with their descriptions, plugins and peers; --format=json prints the
// same document (cli/list_catalog.hpp) for scripts.
#include "cli/list_command.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/list_catalog.hpp"
#include "cli/output_file.hpp"
#include "cli/report_outputs.hpp"
#include "orchestrate/plugin_loader.hpp"
#include "core/text_table.hpp"

namespace ab {

namespace {

using json = nlohmann::json;

// A found plugin's or peer's configurations, its Q/O order when it is not attnbench's own, and the variants it runs.
std::string configs_cell(const json& p) {
  std::string cell = fmt::format("configs: {}", fmt::join(p["configs"].get<std::vector<std::string>>(), ","));
  if (p.value("qo_layout", std::string()) == "token-major") cell += "; Q/O token-major";
  if (auto v = p.find("variants"); v != p.end() && v->is_array() && !v->empty())
    cell += fmt::format("; runs {}", fmt::join(v->get<std::vector<std::string>>(), ", "));
  return cell;
}

// The peers section: a found peer as a plugin is shown; an unavailable one with its reason; a known one not found,
// and a script peer, with how to get it.
std::string render_peers(const json& peers) {
  auto str = [](const json& j, const char* key) { return j.value(key, std::string()); };
  auto left = [](std::size_t gap) { return TableColumn{"", Align::left, 0, true, gap}; };
  std::string s = "peers (--peers=all|NAME,...; other libraries' kernels; docs/peers.md):\n";
  TextTable table({left(0), left(2), left(2), left(2)});
  for (const auto& p : peers) {
    const std::string strategy = "  " + str(p, "strategy"), status = str(p, "status");
    if (status == "found") {
      std::string description = str(p, "description").empty() ? "" : "(" + str(p, "description") + ")";
      table.add_row({strategy, str(p, "version").empty() ? "-" : str(p, "version"), str(p, "path"), configs_cell(p)},
                    description);
    } else if (status == "unavailable") {
      table.add_row({strategy, "unavailable", str(p, "path")}, str(p, "reason"));
    } else if (status == "missing") {
      table.add_row({strategy}, fmt::format("not found ({}); to get it: {}", str(p, "description"), str(p, "how")));
    } else if (status == "not built") {
      table.add_row({strategy}, fmt::format("({}): {}", str(p, "description"), str(p, "how")));
    } else {
      table.add_row({strategy}, fmt::format("script peer ({}): {}", str(p, "description"), str(p, "how")));
    }
  }
  return s + table.body();
}

// The text of `list`: each section one aligned table (core/text_table.hpp: a column as wide as its widest
// cell), indented by two spaces.
std::string render_text(const json& c) {
  auto str = [](const json& j, const char* key) { return j[key].get<std::string>(); };
  auto left = [](std::size_t gap) { return TableColumn{"", Align::left, 0, true, gap}; };
  auto right = [](std::size_t gap) { return TableColumn{"", Align::right, 0, true, gap}; };
  std::string s = "strategies (launches per forward; example B=32 H=12 P=8):\n";
  // name, what, formula, ->, N, launch(es). The formulas hold "·" (two bytes, one column): the widths are
  // counted in characters here, as fmt pads, not in bytes as TextTable's fit would.
  std::vector<TableColumn> columns = {left(0), left(2), left(2), left(2), right(1), left(1)};
  std::vector<std::vector<std::string>> rows;
  for (const auto& st : c["strategies"]) {
    long long n = st["example_launches"].get<long long>();
    rows.push_back({"  " + str(st, "name"), str(st, "description"), str(st, "launch_formula"), "->", std::to_string(n),
                    n == 1 ? "launch" : "launches"});
  }
  for (std::size_t i = 0; i < columns.size(); ++i) {
    columns[i].fit = false;
    for (const auto& row : rows) {
      std::size_t chars = 0;
      for (unsigned char ch : row[i]) chars += (ch & 0xC0) != 0x80;  // UTF-8: count all but continuation bytes
      columns[i].width = std::max(columns[i].width, chars);
    }
  }
  TextTable strategies(columns);
  for (auto& row : rows) strategies.add_row(std::move(row));
  s += strategies.body();
  s += "backends:\n";
  TextTable backends({left(0), left(2)});
  for (const auto& b : c["backends"]) backends.add_row({"  " + str(b, "name"), str(b, "description")});
  s += backends.body();
  s += "devices:\n";
  if (c["devices"].empty()) s += "  none (no CUDA device visible; runs use the CPU backend)\n";
  TextTable devices({left(0), left(2), left(2), right(2), right(2)});
  for (const auto& d : c["devices"]) {
    std::string index = fmt::format("  cuda:{}", d["index"].get<int>());
    if (d.contains("unavailable")) devices.add_row({index}, "unavailable: " + str(d, "unavailable"));
    else
      devices.add_row({index, str(d, "name"), "cc " + str(d, "cc"), fmt::format("{} SMs", d["sms"].get<int>()),
                       fmt::format("{:.1f} GiB", d["memory_gib"].get<double>())});
  }
  s += devices.body();
  s += "timers (--timer):\n";
  TextTable timers({left(0), left(2)});
  for (const auto& t : c["timers"]) timers.add_row({"  " + str(t, "name"), str(t, "description")});
  s += timers.body();
  const json& tiles = c["fused_tiles"];
  s += fmt::format("fused tiles (--tile; compiled for the {} backend, {}; family, head_dims each runs, and those "
                   "where it applies a window, soft-cap and sinks too):\n",
                   tiles.empty() ? "-" : str(tiles[0], "backend"), tiles.empty() ? "-" : str(tiles[0], "arch"));
  auto dims = [](const json& a) {
    std::string d;
    for (const auto& x : a) d += (d.empty() ? "" : ",") + std::to_string(x.get<int>());
    return d.empty() ? std::string("-") : d;
  };
  TextTable tile_table({left(0), left(2), left(2), left(2), left(2)});
  for (const auto& t : tiles) {
    if (t.contains("unavailable"))
      tile_table.add_row({"  " + str(t, "name"), str(t, "family")}, "not here: " + str(t, "unavailable"));
    else
      tile_table.add_row({"  " + str(t, "name"), str(t, "family"), "fp16 D=" + dims(t["head_dims_fp16"]),
                          "bf16 D=" + dims(t["head_dims_bf16"]), "variants D=" + dims(t.value("head_dims_variants", json::array()))});
  }
  s += tile_table.body();
  s += "suites (--config=NAME):\n";
  if (c["suites"].empty()) s += "  none found\n";
  TextTable suites({left(0), left(2)});
  for (const auto& u : c["suites"]) suites.add_row({"  " + str(u, "name"), str(u, "description")});
  s += suites.body();
  s += "plugins (--plugin=PATH):\n";
  if (c["plugins"].empty()) s += "  none loaded\n";
  TextTable plugins({left(0), left(2), left(2), left(2)});
  for (const auto& p : c["plugins"]) {
    std::string version = str(p, "version").empty() ? "-" : str(p, "version");
    std::string description = str(p, "description").empty() ? "" : "(" + str(p, "description") + ")";
    plugins.add_row({"  " + str(p, "strategy"), version, str(p, "path"), configs_cell(p)}, description);
  }
  s += plugins.body();
  s += render_peers(c["peers"]);
  return s;
}

}  // namespace

Command add_list_command(CLI::App& parent) {
  auto outputs = std::make_shared<ReportOutputs>();
  auto legacy = std::make_shared<LegacyOutput>();
  auto plugins = std::make_shared<std::vector<std::string>>();
  auto timeout = std::make_shared<double>(kPluginLoadTimeoutS);
  CLI::App* app = parent.add_subcommand(
      "list", "list strategies, backends, devices, timers, fused tiles, suites, plugins and peers");
  add_json_output_flag(*app, *outputs, "write the catalogue (attnbench.list/1, for scripts)");
  add_legacy_output_flags(*app, *legacy);
  app->add_option("--plugin", *plugins, "load a plugin library (repeatable) to list it (docs/plugins.md)");
  app->add_option("--plugin_timeout,--plugin-timeout", *timeout,
                  "seconds a plugin's loader process may take before it is killed (default and at most 30)")
      ->check(CLI::Range(0.1, kPluginLoadTimeoutS));
  return Command{app, [outputs, legacy, plugins, timeout]() {
                   const ConsoleTarget console = apply_legacy_output(*legacy, *outputs, "json", "list");
                   check_report_outputs(*outputs);
                   load_plugins_in_children(*plugins, plugin_load_timeout(*timeout));  // never loaded here
                   json c = list_catalog(plugin_load_timeout(*timeout));
                   write_report_outputs(*outputs, [&c](const std::string&) { return c.dump(2) + "\n"; });
                   emit_console(console, *outputs, render_text(c));
                   return 0;
                 }};
}

}  // namespace ab
