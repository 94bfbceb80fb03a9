// HOOK for plugins (issue 18 point 2): `attnbench list` shows what this returns in its "plugins" section and
// JSON array. Nothing loads plugins yet, so it returns none; the plugin loader replaces this body.
#pragma once
#include <string>
#include <vector>

namespace ab {

struct PluginListing {
  std::string name, path, provides;  // provides: "strategy fused_v2", "backend rocm", ...
};

std::vector<PluginListing> list_plugins();

}  // namespace ab
