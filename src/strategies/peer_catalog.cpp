// The catalogue of known peers (strategies/peer_catalog.hpp).
#include "strategies/peer_catalog.hpp"

namespace ab {

const std::vector<KnownPeer>& known_peers() {
  static const std::vector<KnownPeer> peers = {
      {"cudnn", "cuDNN SDPA through cudnn_frontend: contiguous and paged K/V, GQA, causal bottom-right, ragged",
       PeerSource::library},
      {"flashinfer-decode", "FlashInfer batch decode over pages, CUDA cores (q_len 1)", PeerSource::library},
      {"flashinfer-prefill",
       "FlashInfer FA2 batch prefill over pages (contiguous K/V as pages), chunked prefill, any q_len and GQA group; "
       "on q_len 1 its tensor-core decode",
       PeerSource::library},
      {"flashinfer-fa3",
       "FlashInfer Hopper FA3 batch prefill over pages (contiguous K/V as pages), sm_90a; any q_len and GQA group",
       PeerSource::library},
      {"torch-flash", "PyTorch SDPA, its FlashAttention-2 backend", PeerSource::script},
      {"torch-cudnn", "PyTorch SDPA, its cuDNN backend", PeerSource::script},
      {"torch-efficient", "PyTorch SDPA, its memory-efficient backend", PeerSource::script},
      {"torch-math", "PyTorch SDPA, its math backend", PeerSource::script},
      {"torch-unfused", "PyTorch matmul -> softmax -> matmul", PeerSource::script},
      {"torch-gqa-packed", "PyTorch matmul -> softmax -> matmul, GQA-packed (decode)", PeerSource::script},
  };
  return peers;
}

std::string how_to_get(PeerSource source) {
  if (source == PeerSource::script) return "scripts/peer_torch.py, run separately (--merge adds its rows to a report)";
  if (source == PeerSource::unbuilt)
    return "not built by this project (docs/peers.md says why)";
  return "scripts/fetch-peers.sh, then rebuild (the peers build when their headers are found; docs/peers.md)";
}

const KnownPeer* find_known_peer(const std::string& name) {
  for (const KnownPeer& p : known_peers())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace ab
