// A plugin's description from a loader process (orchestrate/plugin_loader.hpp).
#include "orchestrate/plugin_loader.hpp"

#include <sys/wait.h>

#include <algorithm>

#include <fmt/format.h>

#include "orchestrate/child_output.hpp"
#include "core/errors.hpp"
#include "core/input_file.hpp"
#include "strategies/plugin_library.hpp"

namespace ab {

double plugin_load_timeout(double plugin_timeout) { return std::min(kPluginLoadTimeoutS, plugin_timeout); }

PluginInfo describe_plugin_in_child(const std::string& path, double timeout_s) {
  const CapturedChild c = run_self_capturing_stdout({"/proc/self/exe", "describe_plugin", "--", path}, timeout_s,
                                                    kMaxPluginDescriptionJson);
  const int s = c.end.status;
  if (!c.start_error.empty())
    throw UsageError(plugin_error(path, fmt::format("could not start a process to load it: {}", c.start_error)));
  if (c.end.timed_out)
    throw UsageError(plugin_error(path, fmt::format("loading it took longer than {:g} s (a hang in its constructor or "
                                                    "attnbench_plugin()?); its loader process was killed", timeout_s)));
  if (c.overflow)
    throw UsageError(plugin_error(path, fmt::format("its loader process wrote more than {} bytes", kMaxPluginDescriptionJson)));
  if (WIFSIGNALED(s))
    throw UsageError(plugin_error(path, fmt::format("loading it crashed: its loader process was killed by {}",
                                                    signal_text(WTERMSIG(s)))));
  if (!WIFEXITED(s) || WEXITSTATUS(s) != 0 || c.out.empty())
    throw UsageError(plugin_error(path, fmt::format("its loader process exited with status {} before describing it{}",
                                                    WIFEXITED(s) ? WEXITSTATUS(s) : -1,
                                                    WIFEXITED(s) && WEXITSTATUS(s) == 0 ? " (exit() while it was loaded?)" : "")));
  return plugin_info_from_description(c.out, path);
}

void load_plugins_in_children(const std::vector<std::string>& paths, double timeout_s) {
  for (const std::string& path : paths) {
    if (plugin_loaded_from(path)) continue;
    check_regular_input(path, "--plugin");  // a FIFO or device would hang or fool the loader
    add_loaded_plugin({describe_plugin_in_child(path, timeout_s), nullptr});
  }
}

}  // namespace ab
