// Where peers (docs/peers.md) are found: plugin libraries named libattnbench_peer_<name>.so in the folders of
// ATTNBENCH_PEERS_DIR (colon-separated) when it is set, else <the binary's folder>/peers (a build tree), then
// <the binary's folder>/../lib/attnbench/peers (an install). A name found in several folders is the first
// folder's. Finding a file loads nothing (orchestrate/peer_loader.hpp loads them).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ab {

// One peer library on disk: its name (from the file name, which its table's name must equal) and its path.
struct PeerLibrary {
  std::string name;
  std::string path;
};

// The environment variable naming the peer folders (set: the only ones searched).
inline constexpr const char* kPeersDirEnv = "ATTNBENCH_PEERS_DIR";
// A peer's file name: kPeerFilePrefix + name + kPeerFileSuffix.
inline constexpr const char* kPeerFilePrefix = "libattnbench_peer_";
inline constexpr const char* kPeerFileSuffix = ".so";
// The version text of a peer that loads but cannot run here (plugin.h): "unavailable: <why>".
inline constexpr const char* kUnavailableVersionPrefix = "unavailable:";

// The folders searched, in order (those that do not exist included).
std::vector<std::string> peer_search_dirs();
// The peer libraries of those folders: sorted by name within a folder, a name's first folder winning.
std::vector<PeerLibrary> find_peer_libraries();
// The reason in a version "unavailable: <why>" (trimmed; "no reason given" when empty), or nullopt for any
// other version.
std::optional<std::string> unavailable_reason(const std::string& version);

}  // namespace ab
