// HOOK: the loaded plugins for `attnbench list` (none until a plugin loader exists; see list_plugins.hpp).
#include "cli/list_plugins.hpp"

namespace ab {

std::vector<PluginListing> list_plugins() { return {}; }

}  // namespace ab
