// The test hook ATTNBENCH_INJECT_FAULT, kept off the backend's production interfaces: a backend that can
// break its own device context the way a kernel bug would implements FaultInjector beside Backend, and the
// runner finds it through fault_injector_of when the hook asks for a fault.
#pragma once

namespace ab {

class Backend;

class FaultInjector {
 public:
  virtual ~FaultInjector() = default;
  // Make the device fail with a sticky error, as a kernel writing to an invalid address would. cuda: such a
  // kernel; cpu: simulated, and Backend::recover() then fails. Throws BackendError.
  virtual void inject_fault() = 0;
};

// The FaultInjector of `backend` (of the backend a ComposedBackend decorates), or nullptr when it has none.
FaultInjector* fault_injector_of(Backend& backend);

// Injects a fault through fault_injector_of(backend); throws BackendError when the backend cannot.
void inject_fault(Backend& backend);

}  // namespace ab
