// One peer library loaded and checked (orchestrate/peer_loader.hpp).
#include "orchestrate/peer_loader.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"
#include "orchestrate/plugin_loader.hpp"
#include "strategies/peer_catalog.hpp"

namespace ab {

namespace {

// A plugin refusal ("--plugin=PATH: why") without its --plugin prefix: the peer's own line names it.
std::string refusal_reason(const std::string& message, const std::string& path) {
  const std::string prefix = plugin_error(path, "");
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

// Why a loaded peer cannot run, or "".
std::string check_loaded_peer(const PluginInfo& info, const PeerLibrary& library) {
  if (info.name != library.name)
    return fmt::format("its table is named '{}', not '{}' (a peer's file is {}<its name>{})", info.name, library.name,
                       kPeerFilePrefix, kPeerFileSuffix);
  if (const KnownPeer* known = find_known_peer(info.name); known && known->source == PeerSource::script)
    return fmt::format("'{}' is the name of a script peer (scripts/peer_torch.py)", info.name);
  if (std::optional<std::string> why = unavailable_reason(info.version)) return *why;
  return "";
}

}  // namespace

PeerOutcome load_peer(const PeerLibrary& library, bool code_here, double timeout_s) {
  PeerOutcome out;
  out.library = library;
  try {
    LoadedPlugin p = code_here ? open_plugin_library(library.path)
                               : LoadedPlugin{describe_plugin_in_child(library.path, timeout_s), nullptr};
    p.info.kind = PluginKind::peer;
    out.unavailable = check_loaded_peer(p.info, library);
    out.plugin = std::move(p);
  } catch (const UsageError& e) {
    out.unavailable = refusal_reason(e.what(), library.path);
  }
  return out;
}

}  // namespace ab
