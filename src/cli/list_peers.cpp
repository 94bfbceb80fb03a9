// `attnbench list`'s peers (cli/list_peers.hpp).
#include "cli/list_peers.hpp"

#include <set>

#include "orchestrate/peer_loader.hpp"
#include "strategies/peer_catalog.hpp"
#include "strategies/peer_libraries.hpp"

namespace ab {

namespace {

using json = nlohmann::json;

json found_peer(const PeerOutcome& o) {
  json e = {{"name", o.library.name}, {"strategy", kPeerPrefix + o.library.name}, {"source", "library"},
            {"path", o.library.path}};
  if (o.plugin) {
    const PluginInfo& info = o.plugin->info;
    e["version"] = info.version;
    e["description"] = info.description;
    e["configs"] = info.configs;
    e["qo_layout"] = qo_layout_name(info.qo_layout);
    e["variants"] = info.variants;
  }
  e["status"] = o.usable() ? "found" : "unavailable";
  if (!o.usable()) e["reason"] = o.unavailable;
  return e;
}

json known_peer(const KnownPeer& k) {
  const bool script = k.source == PeerSource::script, unbuilt = k.source == PeerSource::unbuilt;
  return {{"name", k.name},
          {"strategy", kPeerPrefix + k.name},
          {"source", script ? "script" : "library"},
          {"status", script ? "script" : unbuilt ? "not built" : "missing"},
          {"description", k.description},
          {"how", how_to_get(k.source)}};
}

}  // namespace

json list_peers(double timeout_s) {
  json list = json::array();
  std::set<std::string> found;
  for (const PeerLibrary& lib : find_peer_libraries()) {
    list.push_back(found_peer(load_peer(lib, /*code_here=*/false, timeout_s)));
    found.insert(lib.name);
  }
  for (const KnownPeer& k : known_peers())
    if (!found.count(k.name)) list.push_back(known_peer(k));
  return list;
}

}  // namespace ab
