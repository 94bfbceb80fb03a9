// The loader process of one plugin (cli/describe_plugin_command.hpp).
#include "cli/describe_plugin_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include "core/errors.hpp"
#include "core/fd_write.hpp"
#include "strategies/plugin_description.hpp"
#include "strategies/plugin_library.hpp"

namespace ab {

namespace {

// The answer goes to what stdout is now; whatever the library prints while it loads goes to /dev/null.
int answer_channel() {
  int answer = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (answer < 0) return -1;
  int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0 || dup2(null, 1) < 0) return -1;
  ::close(null);
  return answer;
}

int describe(const std::string& path) {
  const int answer = answer_channel();
  if (answer < 0) _exit(3);
  std::string doc;
  try {
    doc = plugin_description_json(open_plugin_library(path).info);
  } catch (const UsageError& e) {
    doc = plugin_refusal_json(e.what());
  }
  const bool written = write_fully(answer, doc) && ::close(answer) == 0;
  // _exit: the library stays loaded, and its static destructors (its code) do not run at exit.
  _exit(written ? 0 : 3);
}

}  // namespace

Command add_describe_plugin_command(CLI::App& parent) {
  auto path = std::make_shared<std::string>();
  CLI::App* app = parent.add_subcommand("describe_plugin", "");
  app->group("");  // hidden: run by orchestrate/plugin_loader.cpp
  app->add_option("path", *path)->required();
  return Command{app, [path]() { return describe(*path); }};
}

}  // namespace ab
