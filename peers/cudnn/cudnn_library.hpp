// Finding and loading libcudnn at run time for the cuDNN peer: cudnn_frontend is built with dynamic loading
// (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING), so the peer links no cuDNN and a machine without it gets a row
// `unsupported` with the reason instead of a library that fails to load. Search order: ATTNBENCH_CUDNN_LIB
// (a path to libcudnn.so.9), $CUDNN_PATH/lib/libcudnn.so.9, then libcudnn.so.9 on the loader's own path
// (LD_LIBRARY_PATH, e.g. PyTorch's site-packages/nvidia/cudnn/lib).
#pragma once
#include <string>

namespace ab_peer_cudnn {

struct CudnnLibrary {
  bool loaded = false;
  std::string why;      // why it is not loaded ("" when loaded)
  std::string path;     // the name or path that loaded
  long version = 0;     // cudnnGetVersion(): 91900 for 9.19.0
};

// Loads libcudnn once per process (later calls return the same answer) and points cudnn_frontend at it.
const CudnnLibrary& cudnn_library();

// "9.19.0" from 91900.
std::string version_text(long version);

}  // namespace ab_peer_cudnn
