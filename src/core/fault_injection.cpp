// Finding a backend's fault injector (the ATTNBENCH_INJECT_FAULT test hook) behind its decorators.
#include "core/fault_injection.hpp"

#include "core/backend_decorators.hpp"
#include "core/errors.hpp"

namespace ab {

FaultInjector* fault_injector_of(Backend& backend) {
  if (auto* injector = dynamic_cast<FaultInjector*>(&backend)) return injector;
  if (auto* composed = dynamic_cast<ComposedBackend*>(&backend)) return fault_injector_of(composed->inner());
  return nullptr;
}

void inject_fault(Backend& backend) {
  FaultInjector* injector = fault_injector_of(backend);
  if (!injector) throw BackendError("this backend cannot inject faults");
  injector->inject_fault();
}

}  // namespace ab
