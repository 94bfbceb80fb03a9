// fenced_setup (common/peer_plugin.hpp).
#include "common/peer_plugin.hpp"

#include <exception>

#include "common/message.hpp"

namespace abfi {

int fenced_setup(const char* what, CanImplement can, BuildState build, const ab_problem* p, const ab_tensors* t,
                 int32_t config, void** state, char* err, size_t err_size) {
  char why[512] = {};
  if (can(p, t->backend, config, why, sizeof why) != 0) return say(err, err_size, "%s", why);
  try {
    std::unique_ptr<PeerState> s = build(*p, *t);
    *state = s.release();
    return 0;
  } catch (const std::exception& e) {
    return say(err, err_size, "%s setup: %s", what, e.what());
  } catch (...) {
    return say(err, err_size, "%s setup: unknown exception", what);
  }
}

}  // namespace abfi
