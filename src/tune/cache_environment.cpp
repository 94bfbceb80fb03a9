// CacheEnvironment: built from DeviceInfo, hashed into a stable id, read and written as JSON.
#include "tune/cache_environment.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/fnv_hash.hpp"

namespace ab {

CacheEnvironment CacheEnvironment::from_device(const DeviceInfo& d) {
  CacheEnvironment e;
  e.backend = d.backend;
  e.gpu = d.name;
  e.cc = fmt::format("{}.{}", d.cc_major, d.cc_minor);
  e.driver = d.driver;
  e.cuda_runtime = d.cuda_runtime;
  e.cublaslt = d.cublaslt;
  return e;
}

std::string CacheEnvironment::id() const {
  // FNV-1a over the fields, separated by a byte that cannot appear in them.
  std::uint64_t h = kFnvBasis;
  for (const std::string* s : {&backend, &gpu, &cc, &driver, &cuda_runtime, &cublaslt}) h = fnv1a_byte(fnv1a(*s, h), 0x1f);
  return fmt::format("env-{:012x}", h & 0xffffffffffffull);
}

std::string CacheEnvironment::describe() const {
  if (backend == "cpu") return fmt::format("cpu backend on {}", gpu.empty() ? "unknown CPU" : gpu);
  return fmt::format("{} (cc {}, driver {}, CUDA {}, cuBLASLt {})", gpu, cc, driver.empty() ? "?" : driver,
                     cuda_runtime.empty() ? "?" : cuda_runtime, cublaslt.empty() ? "?" : cublaslt);
}

nlohmann::json CacheEnvironment::to_json() const {
  return {{"id", id()},          {"backend", backend},           {"gpu", gpu},          {"cc", cc},
          {"driver", driver},    {"cuda_runtime", cuda_runtime}, {"cublaslt", cublaslt}};
}

CacheEnvironment CacheEnvironment::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: environment must be an object", where));
  CacheEnvironment e;
  auto field = [&](const char* name, std::string* out) {
    if (!j.contains(name) || !j[name].is_string())
      throw UsageError(fmt::format("{}: environment field '{}' missing or not a string", where, name));
    *out = j[name].get<std::string>();
  };
  field("backend", &e.backend);
  field("gpu", &e.gpu);
  field("cc", &e.cc);
  field("driver", &e.driver);
  field("cuda_runtime", &e.cuda_runtime);
  field("cublaslt", &e.cublaslt);
  return e;
}

bool CacheEnvironment::operator==(const CacheEnvironment& o) const {
  return backend == o.backend && gpu == o.gpu && cc == o.cc && driver == o.driver &&
         cuda_runtime == o.cuda_runtime && cublaslt == o.cublaslt;
}

}  // namespace ab
