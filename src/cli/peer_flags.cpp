// --peers and a suite's "peers": parsing, finding and loading the selected peers, and the command line children get.
#include "cli/peer_flags.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command_notes.hpp"
#include "core/errors.hpp"
#include "core/grid.hpp"
#include "core/json_file.hpp"
#include "core/text_split.hpp"
#include "orchestrate/peer_loader.hpp"
#include "orchestrate/plugin_loader.hpp"
#include "strategies/peer_catalog.hpp"
#include "strategies/plugin_description.hpp"

namespace ab {

namespace {

bool valid_peer_name(const std::string& n) {
  if (n.empty() || n.size() > kMaxPluginName) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::string searched_dirs() { return fmt::format("{}", fmt::join(peer_search_dirs(), ", ")); }

// How an error line or note names what selected `what` ("all", a peer's name): "--peers=cudnn", or the suite's
// "config 'PATH': peers".
std::string selected_by(const PeerSelection& sel, const std::string& what) {
  return sel.origin == "--peers" ? "--peers=" + what : sel.origin;
}

// The one line for a named peer that is not found: the peers that are, where they were looked for, and how to
// get a known one.
std::string not_found(const PeerSelection& sel, const std::string& name, const std::vector<PeerLibrary>& found) {
  std::vector<std::string> names;
  for (const PeerLibrary& p : found) names.push_back(p.name);
  const std::string available = names.empty() ? "none found" : fmt::format("found: {}", fmt::join(names, ", "));
  std::string hint = "; `attnbench list` shows the known peers";
  if (const KnownPeer* known = find_known_peer(name))
    hint = known->source == PeerSource::script
               ? fmt::format("; peer:{} is a script peer: {}", name, how_to_get(known->source))
               : fmt::format("; to get it: {}", how_to_get(known->source));
  return fmt::format("{}: no peer named '{}' ({}; searched {}; {} adds folders){}", sel.origin, name, available,
                     searched_dirs(), kPeersDirEnv, hint);
}

bool is_peers_flag(const std::string& a) { return a == "--peers" || a.rfind("--peers=", 0) == 0; }
bool is_config_flag(const std::string& a) { return a == "--config" || a.rfind("--config=", 0) == 0; }

// A list of peer names (never all or none), with errors beginning with `origin`.
PeerSelection parse_peer_names(const std::vector<std::string>& names, const std::string& origin) {
  PeerSelection s;
  s.origin = origin;
  for (const std::string& name : names) {
    if (name == "all" || name == "none")
      throw UsageError(fmt::format("{}: '{}' stands alone (all or none), not in a list", origin, name));
    if (!valid_peer_name(name))
      throw UsageError(fmt::format("{}: '{}' is not a peer name (all, none, or names of [A-Za-z0-9_.-], comma-"
                                   "separated; `attnbench list` shows them)", origin, name));
    if (std::find(s.names.begin(), s.names.end(), name) != s.names.end())
      throw UsageError(fmt::format("{}: '{}' is listed twice", origin, name));
    s.names.push_back(name);
  }
  return s;
}

// --peers' grammar (all, none, or comma-separated names), with errors beginning with `origin`.
PeerSelection parse_peers(const std::string& value, const std::string& origin) {
  if (value == "none" || value == "all") {
    PeerSelection s;
    s.origin = origin;
    s.all = value == "all";
    return s;
  }
  std::vector<std::string> names;
  for (const std::string& piece : split_text(value, ',')) names.push_back(trim_text(piece));
  return parse_peer_names(names, origin);
}

// A suite's "peers" ("all", "none", "a,b" or ["a", "b"]), or nothing when it has none.
PeerSelection suite_peers(const std::string& config) {
  const std::string path = resolve_suite_path(config);
  const nlohmann::json j = read_json_file(path);
  const std::string origin = fmt::format("config '{}': peers", path);
  if (!j.is_object() || !j.contains("peers")) return PeerSelection{false, {}, origin};
  const nlohmann::json& v = j["peers"];
  if (v.is_string()) return parse_peers(v.get<std::string>(), origin);
  const std::string shape = fmt::format("{} must be \"all\", \"none\" or a list of peer names", origin);
  if (!v.is_array() || v.empty()) throw UsageError(shape);
  std::vector<std::string> names;
  for (const nlohmann::json& e : v) {
    if (!e.is_string()) throw UsageError(shape);
    names.push_back(e.get<std::string>());
  }
  return parse_peer_names(names, origin);
}

}  // namespace

PeerSelection parse_peers_flag(const std::string& value) { return parse_peers(value, "--peers"); }

PeerSelection selected_peers(const SharedFlags& f) {
  if (!f.peers.empty() || f.config.empty()) return parse_peers_flag(f.peers.empty() ? "none" : f.peers);
  PeerSelection out;
  std::vector<std::string> origins;
  for (const std::string& suite : suite_names(f.config)) {
    const PeerSelection s = suite_peers(suite);
    if (!s.all && s.names.empty()) continue;
    origins.push_back(s.origin);
    out.all = out.all || s.all;
    for (const std::string& n : s.names)
      if (std::find(out.names.begin(), out.names.end(), n) == out.names.end()) out.names.push_back(n);
  }
  if (out.all) out.names.clear();
  if (!origins.empty()) out.origin = fmt::format("{}", fmt::join(origins, ", "));
  return out;
}

void load_flag_peers(const SharedFlags& f, bool code_here) {
  const PeerSelection sel = selected_peers(f);
  if (!sel.all && sel.names.empty()) return;
  const std::vector<PeerLibrary> found = find_peer_libraries();
  const double timeout = plugin_load_timeout(f.plugin_timeout);
  if (sel.all) {
    if (found.empty())
      defer_note(fmt::format("{}: no peer library found in {} ({} adds folders); docs/peers.md says how to build them",
                             selected_by(sel, "all"), searched_dirs(), kPeersDirEnv));
    for (const PeerLibrary& lib : found) {
      PeerOutcome o = load_peer(lib, code_here, timeout);
      if (!o.usable()) {
        defer_note(fmt::format("{}: peer:{} ({}) is skipped: {}", selected_by(sel, "all"), lib.name, lib.path, o.unavailable));
        continue;
      }
      add_loaded_plugin(std::move(*o.plugin));
    }
    return;
  }
  for (const std::string& name : sel.names) {
    auto lib = std::find_if(found.begin(), found.end(), [&](const PeerLibrary& p) { return p.name == name; });
    if (lib == found.end()) throw UsageError(not_found(sel, name, found));
    PeerOutcome o = load_peer(*lib, code_here, timeout);
    if (!o.usable())
      throw UsageError(fmt::format("{}: peer:{} ({}) cannot be used: {}", selected_by(sel, name), name, lib->path,
                                   o.unavailable));
    add_loaded_plugin(std::move(*o.plugin));
  }
}

std::string loaded_peers() {
  std::vector<std::string> names;
  for (const LoadedPlugin& p : loaded_plugins())
    if (p.info.kind == PluginKind::peer) names.push_back(p.info.name);
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ","));
}

std::vector<std::string> arguments_with_loaded_peers(const std::vector<std::string>& argv) {
  const std::string peers = loaded_peers();
  // A suite's "peers" count as given: the children are told the peers loaded here, not the suite's again.
  const bool given = std::any_of(argv.begin() + (argv.empty() ? 0 : 1), argv.end(),
                                 [](const std::string& a) { return is_peers_flag(a) || is_config_flag(a); });
  if (!given && peers == "none") return argv;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i > 0 && argv[i] == "--peers") {
      ++i;  // and its value
      continue;
    }
    if (i > 0 && is_peers_flag(argv[i])) continue;
    out.push_back(argv[i]);
  }
  out.push_back("--peers=" + peers);
  return out;
}

}  // namespace ab
