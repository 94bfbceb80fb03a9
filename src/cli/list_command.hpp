// `attnbench list [--json=FILE|-]`.
#pragma once
#include "cli/commands.hpp"

namespace ab {
Command add_list_command(CLI::App& parent);
}
