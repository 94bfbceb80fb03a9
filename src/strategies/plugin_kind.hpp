// The two kinds of plugin library and the strategy names they get: a user's plugin (--plugin=PATH) runs as
// "plugin:<name>"; a peer, another library's kernels built by this project as a plugin (--peers, docs/peers.md),
// runs as "peer:<name>", the prefix the PyTorch script peers (scripts/peer_torch.py) write too.
#pragma once
#include <string>

namespace ab {

enum class PluginKind { plugin, peer };

// The prefix of every plugin strategy's name.
inline constexpr const char* kPluginPrefix = "plugin:";
// The prefix of every peer's strategy name, in-process (--peers) or from scripts/peer_torch.py.
inline constexpr const char* kPeerPrefix = "peer:";

inline const char* strategy_prefix(PluginKind kind) { return kind == PluginKind::peer ? kPeerPrefix : kPluginPrefix; }
// Whether a strategy name is a peer's (in-process or a script's).
inline bool is_peer_strategy(const std::string& strategy) { return strategy.rfind(kPeerPrefix, 0) == 0; }

}  // namespace ab
