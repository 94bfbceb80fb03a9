// The plugin shell both FlashInfer peers share: their one configuration, the launch count their plans decide,
// a setup that asks can_implement again and turns every exception into the ABI's message, and the table.
// A peer supplies its can_implement, how it builds its PeerState, its name, description and Q/O order.
#pragma once
#include <attnbench/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/peer_state.hpp"

namespace abfi {

using CanImplement = int (*)(const ab_problem*, int32_t backend, int32_t config, char* reason, size_t reason_size);
// Builds a row's state (plans, page arrays, prepared launch); throws on failure.
using BuildState = std::unique_ptr<PeerState> (*)(const ab_problem&, const ab_tensors&);
using SetupFn = int (*)(const ab_problem*, const ab_tensors*, int32_t, void**, char*, size_t);

// One configuration, FlashInfer's defaults.
inline const char* const kPeerConfigs[] = {"default"};
constexpr int32_t kNumPeerConfigs = 1;

// The plan decides between one kernel and two (split KV, then the merge): not declared, counted.
inline int64_t plan_decides_launches(const ab_problem*, int32_t) { return -1; }

// The ABI's setup for a peer: `can` again (setup may come without it), then `build`; "<what> setup: <why>" on
// any exception.
int fenced_setup(const char* what, CanImplement can, BuildState build, const ab_problem* p, const ab_tensors* t,
                 int32_t config, void** state, char* err, size_t err_size);

// The peer's table.
constexpr ab_plugin peer_table(const char* name, const char* version, const char* description, CanImplement can,
                               SetupFn setup, int32_t qo_layout, uint32_t variants = 0u) {
  return ab_plugin{ATTNBENCH_PLUGIN_ABI_VERSION,
                   sizeof(ab_plugin),
                   name,
                   version,
                   description,
                   kNumPeerConfigs,
                   kPeerConfigs,
                   can,
                   plan_decides_launches,
                   setup,
                   peer_forward,
                   peer_teardown,
                   qo_layout,
                   variants};  // enum ab_variant bits: what the peer's FlashInfer instances apply
}

}  // namespace abfi
