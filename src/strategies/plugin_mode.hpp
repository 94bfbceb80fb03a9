// Whether plugin code runs in this process: false in the run command's own process (plugin rows go to a
// child process, orchestrate/plugin_process.hpp), true in that child and wherever a caller runs plugins directly.
#pragma once

namespace ab {

bool plugins_run_in_process();
void set_plugins_run_in_process(bool in_process);

}  // namespace ab
