// Loads libcudnn.so.9 with dlopen for cudnn_frontend's dynamic loading (cudnn_library.hpp says where it looks).
#include "cudnn_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

// cudnn_frontend's dynamic loading reads every backend symbol through this handle (cudnn_frontend_shim.h).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}

namespace ab_peer_cudnn {

namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> names;
  if (const char* lib = std::getenv("ATTNBENCH_CUDNN_LIB"); lib && *lib) names.emplace_back(lib);
  if (const char* root = std::getenv("CUDNN_PATH"); root && *root) names.push_back(std::string(root) + "/lib/libcudnn.so.9");
  names.emplace_back("libcudnn.so.9");
  return names;
}

CudnnLibrary load() {
  CudnnLibrary lib;
  std::string tried;
  for (const std::string& name : candidates()) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : name.c_str());
      continue;
    }
    using GetVersion = size_t (*)();
    auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "cudnnGetVersion"));
    if (!get_version) {
      tried += (tried.empty() ? "" : "; ") + name + ": no cudnnGetVersion";
      dlclose(handle);
      continue;
    }
    lib.version = static_cast<long>(get_version());
    if (lib.version < 90500) {  // paged K/V and bottom-right causal need cuDNN 9.5 or later
      tried += (tried.empty() ? "" : "; ") + name + " is cuDNN " + version_text(lib.version) + " (9.5 or later needed)";
      dlclose(handle);
      continue;
    }
    cudnn_frontend::cudnn_dlhandle = handle;
    lib.loaded = true;
    lib.path = name;
    return lib;
  }
  lib.why = "libcudnn.so.9 not found (set ATTNBENCH_CUDNN_LIB or LD_LIBRARY_PATH; docs/peers.md): " + tried;
  return lib;
}

}  // namespace

const CudnnLibrary& cudnn_library() {
  static const CudnnLibrary lib = load();
  return lib;
}

std::string version_text(long v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

}  // namespace ab_peer_cudnn
