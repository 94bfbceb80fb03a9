// The process-wide switch of strategies/plugin_mode.hpp.
#include "strategies/plugin_mode.hpp"

namespace ab {

namespace {
bool g_in_process = true;
}

bool plugins_run_in_process() { return g_in_process; }
void set_plugins_run_in_process(bool in_process) { g_in_process = in_process; }

}  // namespace ab
