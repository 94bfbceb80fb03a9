// The peers attnbench knows of (docs/peers.md), found or not: the in-process ones this project builds as plugin
// libraries (peers/) and the PyTorch script peers of scripts/peer_torch.py; what each is and how to get it.
// `attnbench list` shows a known peer that is not found with the line saying how to get it.
#pragma once
#include <string>
#include <vector>

namespace ab {

enum class PeerSource {
  library,  // built by this project (peers/) into libattnbench_peer_<name>.so; loaded with --peers
  script,   // a row of scripts/peer_torch.py, run separately (--merge into a report)
  unbuilt   // known, but this project does not build it (docs/peers.md says why)
};

struct KnownPeer {
  std::string name;  // the strategy is "peer:" + name
  std::string description;
  PeerSource source = PeerSource::library;
};

// Every known peer, the library ones first.
const std::vector<KnownPeer>& known_peers();
// How to get a known peer that is not here.
std::string how_to_get(PeerSource source);
// The known peer named `name`, or nullptr.
const KnownPeer* find_known_peer(const std::string& name);

}  // namespace ab
