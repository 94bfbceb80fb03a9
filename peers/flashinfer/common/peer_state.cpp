// peer_forward and peer_teardown, the FlashInfer peers' shared plugin entry points.
#include "common/peer_state.hpp"

#include <cuda_runtime_api.h>

#include <exception>

#include "common/message.hpp"

namespace abfi {

int peer_forward(void* state, char* err, std::size_t err_size) {
  auto* s = static_cast<PeerState*>(state);
  try {
    cudaError_t e = s->forward->launch();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return say(err, err_size, "%s: launch failed: %s", s->what, cudaGetErrorString(e));
    return 0;
  } catch (const std::exception& e) {
    return say(err, err_size, "%s: %s", s->what, e.what());
  } catch (...) {
    return say(err, err_size, "%s: unknown exception", s->what);
  }
}

void peer_teardown(void* state) { delete static_cast<PeerState*>(state); }

}  // namespace abfi
