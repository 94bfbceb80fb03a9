// `attnbench list`: strategies with their launch contracts, backends, devices, timers, the fused tiles compiled
// per head_dim on this machine's backend, suites with their descriptions and plugins; --format=json prints the
// same document (cli/list_catalog.hpp) for scripts.
#include "cli/list_command.hpp"

#include <memory>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/list_catalog.hpp"
#include "cli/output_file.hpp"
#include "cli/report_outputs.hpp"
#include "cli/plugin_loader.hpp"

namespace ab {

namespace {

using json = nlohmann::json;

std::string dims(const json& a) {
  std::string s;
  for (const auto& d : a) s += (s.empty() ? "" : ",") + std::to_string(d.get<int>());
  return s.empty() ? "-" : s;
}

std::string render_text(const json& c) {
  std::string s = "strategies (launches per forward; example B=32 H=12 P=8):\n";
  for (const auto& st : c["strategies"])
    s += fmt::format("  {:<14} {:<58} {} -> {} launches\n", st["name"].get<std::string>(),
                     st["description"].get<std::string>(), st["launch_formula"].get<std::string>(),
                     st["example_launches"].get<long long>());
  s += "backends:\n";
  for (const auto& b : c["backends"])
    s += fmt::format("  {:<14} {}\n", b["name"].get<std::string>(), b["description"].get<std::string>());
  s += "devices:\n";
  if (c["devices"].empty()) s += "  none (no CUDA device visible; runs use the CPU backend)\n";
  for (const auto& d : c["devices"]) {
    if (d.contains("unavailable"))
      s += fmt::format("  cuda:{}  unavailable: {}\n", d["index"].get<int>(), d["unavailable"].get<std::string>());
    else
      s += fmt::format("  cuda:{}  {}  cc {}  {} SMs  {:.1f} GiB\n", d["index"].get<int>(), d["name"].get<std::string>(),
                       d["cc"].get<std::string>(), d["sms"].get<int>(), d["memory_gib"].get<double>());
  }
  s += "timers (--timer):\n";
  for (const auto& t : c["timers"])
    s += fmt::format("  {:<14} {}\n", t["name"].get<std::string>(), t["description"].get<std::string>());
  const json& tiles = c["fused_tiles"];
  s += fmt::format("fused tiles (--tile; compiled for the {} backend, {}, head_dims each runs):\n",
                   tiles.empty() ? "-" : tiles[0]["backend"].get<std::string>(),
                   tiles.empty() ? "-" : tiles[0]["arch"].get<std::string>());
  for (const auto& t : tiles) {
    if (t.contains("unavailable"))
      s += fmt::format("  {:<14} {:<8} not here: {}\n", t["name"].get<std::string>(), t["kind"].get<std::string>(),
                       t["unavailable"].get<std::string>());
    else
      s += fmt::format("  {:<14} {:<8} fp16 D={}  bf16 D={}\n", t["name"].get<std::string>(),
                       t["kind"].get<std::string>(), dims(t["head_dims_fp16"]), dims(t["head_dims_bf16"]));
  }
  s += "suites (--config=NAME):\n";
  if (c["suites"].empty()) s += "  none found\n";
  for (const auto& u : c["suites"])
    s += fmt::format("  {:<30} {}\n", u["name"].get<std::string>(), u["description"].get<std::string>());
  s += "plugins (--plugin=PATH):\n";
  if (c["plugins"].empty()) s += "  none loaded\n";
  for (const auto& p : c["plugins"])
    s += fmt::format("  {:<24} {}  {}  configs: {}{}\n", p["strategy"].get<std::string>(),
                     p["version"].get<std::string>().empty() ? "-" : p["version"].get<std::string>(),
                     p["path"].get<std::string>(), fmt::join(p["configs"].get<std::vector<std::string>>(), ","),
                     p["description"].get<std::string>().empty() ? "" : "  (" + p["description"].get<std::string>() + ")");
  return s;
}

}  // namespace

Command add_list_command(CLI::App& parent) {
  auto outputs = std::make_shared<ReportOutputs>();
  auto legacy = std::make_shared<LegacyOutput>();
  auto plugins = std::make_shared<std::vector<std::string>>();
  auto timeout = std::make_shared<double>(kPluginLoadTimeoutS);
  CLI::App* app = parent.add_subcommand(
      "list", "list strategies, backends, devices, timers, fused tiles, suites and plugins");
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
                   json c = list_catalog();
                   write_report_outputs(*outputs, [&c](const std::string&) { return c.dump(2) + "\n"; });
                   emit_console(console, *outputs, render_text(c));
                   return 0;
                 }};
}

}  // namespace ab
