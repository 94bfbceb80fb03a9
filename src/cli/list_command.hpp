// `attnbench list [--format=text|json]`.
#pragma once
#include "cli/commands.hpp"

namespace ab {
Command add_list_command(CLI::App& parent);
}
