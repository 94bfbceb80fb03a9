// --peers: parsing, finding and loading the selected peers, and the command line children get.
#include "cli/peer_flags.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command_notes.hpp"
#include "core/errors.hpp"
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

// The one line for a named peer that is not found: the peers that are, where they were looked for, and how to
// get a known one.
std::string not_found(const std::string& name, const std::vector<PeerLibrary>& found) {
  std::vector<std::string> names;
  for (const PeerLibrary& p : found) names.push_back(p.name);
  const std::string available = names.empty() ? "none found" : fmt::format("found: {}", fmt::join(names, ", "));
  std::string hint = "; `attnbench list` shows the known peers";
  if (const KnownPeer* known = find_known_peer(name))
    hint = known->source == PeerSource::script
               ? fmt::format("; peer:{} is a script peer: {}", name, how_to_get(known->source))
               : fmt::format("; to get it: {}", how_to_get(known->source));
  return fmt::format("--peers: no peer named '{}' ({}; searched {}; {} adds folders){}", name, available,
                     searched_dirs(), kPeersDirEnv, hint);
}

bool is_peers_flag(const std::string& a) { return a == "--peers" || a.rfind("--peers=", 0) == 0; }

}  // namespace

PeerSelection parse_peers_flag(const std::string& value) {
  PeerSelection s;
  if (value == "none") return s;
  if (value == "all") {
    s.all = true;
    return s;
  }
  for (const std::string& piece : split_text(value, ',')) {
    const std::string name = trim_text(piece);
    if (name == "all" || name == "none")
      throw UsageError(fmt::format("--peers: '{}' stands alone (--peers=all or --peers=none), not in a list", name));
    if (!valid_peer_name(name))
      throw UsageError(fmt::format("--peers: '{}' is not a peer name (all, none, or names of [A-Za-z0-9_.-], comma-"
                                   "separated; `attnbench list` shows them)", name));
    if (std::find(s.names.begin(), s.names.end(), name) != s.names.end())
      throw UsageError(fmt::format("--peers: '{}' is listed twice", name));
    s.names.push_back(name);
  }
  return s;
}

void load_flag_peers(const SharedFlags& f, bool code_here) {
  const PeerSelection sel = parse_peers_flag(f.peers);
  if (!sel.all && sel.names.empty()) return;
  const std::vector<PeerLibrary> found = find_peer_libraries();
  const double timeout = plugin_load_timeout(f.plugin_timeout);
  if (sel.all) {
    if (found.empty())
      defer_note(fmt::format("--peers=all: no peer library found in {} ({} adds folders); docs/peers.md says how to "
                             "build them", searched_dirs(), kPeersDirEnv));
    for (const PeerLibrary& lib : found) {
      PeerOutcome o = load_peer(lib, code_here, timeout);
      if (!o.usable()) {
        defer_note(fmt::format("--peers=all: peer:{} ({}) is skipped: {}", lib.name, lib.path, o.unavailable));
        continue;
      }
      add_loaded_plugin(std::move(*o.plugin));
    }
    return;
  }
  for (const std::string& name : sel.names) {
    auto lib = std::find_if(found.begin(), found.end(), [&](const PeerLibrary& p) { return p.name == name; });
    if (lib == found.end()) throw UsageError(not_found(name, found));
    PeerOutcome o = load_peer(*lib, code_here, timeout);
    if (!o.usable())
      throw UsageError(fmt::format("--peers={}: peer:{} ({}) cannot be used: {}", name, name, lib->path, o.unavailable));
    add_loaded_plugin(std::move(*o.plugin));
  }
}

std::vector<std::string> arguments_with_loaded_peers(const std::vector<std::string>& argv) {
  std::vector<std::string> names;
  for (const LoadedPlugin& p : loaded_plugins())
    if (p.info.kind == PluginKind::peer) names.push_back(p.info.name);
  const bool given = std::any_of(argv.begin() + (argv.empty() ? 0 : 1), argv.end(), is_peers_flag);
  if (!given && names.empty()) return argv;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i > 0 && argv[i] == "--peers") {
      ++i;  // and its value
      continue;
    }
    if (i > 0 && is_peers_flag(argv[i])) continue;
    out.push_back(argv[i]);
  }
  out.push_back(names.empty() ? std::string("--peers=none") : fmt::format("--peers={}", fmt::join(names, ",")));
  return out;
}

}  // namespace ab
