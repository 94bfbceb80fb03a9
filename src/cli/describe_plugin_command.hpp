// The hidden `attnbench describe_plugin -- PATH`: a plugin's loader process (orchestrate/plugin_loader.hpp). It loads
// the one library here (dlopen, its entry point, the ABI version and table read with bounds) and prints its
// description, or why it cannot be loaded, as one JSON document (strategies/plugin_description.hpp) on stdout.
#pragma once
#include "cli/commands.hpp"

namespace ab {
Command add_describe_plugin_command(CLI::App& parent);
}
