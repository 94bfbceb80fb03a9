// The fault-injection test hook (core/fault_injection.hpp) stands beside the backend's interfaces: the CPU
// backend injects a sticky fault after which it cannot recover, a decorator reaches its inner backend's
// injector, and a backend without one refuses with a BackendError.
#include <string>
#include <utility>

#include "backends/cpu/cpu_backend.hpp"
#include "core/backend_decorators.hpp"
#include "core/errors.hpp"
#include "core/fault_injection.hpp"
#include "testing.hpp"

using namespace ab;

namespace {

// Another backend's interfaces, without a fault injector of its own.
class WithoutInjector : public Backend {
 public:
  explicit WithoutInjector(Backend& inner) : inner_(inner) { set_parts(inner.parts()); }
  BackendKind kind() const override { return inner_.kind(); }
  DeviceInfo device_info() const override { return inner_.device_info(); }

 private:
  Backend& inner_;
};

// A BackendError's stickiness and message, thrown by inject_fault(backend).
std::pair<bool, std::string> fault_of(Backend& backend) {
  try {
    inject_fault(backend);
  } catch (const BackendError& e) {
    return {e.sticky, e.what()};
  }
  ADD_FAILURE() << "inject_fault returned";
  return {false, ""};
}

}  // namespace

TEST(FaultInjection, the_cpu_backend_fails_sticky_and_cannot_recover) {
  auto cpu = make_cpu_backend();
  ASSERT_NE(fault_injector_of(*cpu), nullptr);
  EXPECT_TRUE(cpu->recover());
  auto [sticky, what] = fault_of(*cpu);
  EXPECT_TRUE(sticky);
  EXPECT_NE(what.find("ATTNBENCH_INJECT_FAULT"), std::string::npos) << what;
  EXPECT_FALSE(cpu->recover());
}

TEST(FaultInjection, a_decorator_reaches_its_inner_backends_injector) {
  auto cpu = make_cpu_backend();
  ComposedBackend decorated(*cpu);
  EXPECT_EQ(fault_injector_of(decorated), fault_injector_of(*cpu));
  EXPECT_TRUE(fault_of(decorated).first);
  EXPECT_FALSE(decorated.recover());
}

TEST(FaultInjection, a_backend_without_an_injector_refuses) {
  auto cpu = make_cpu_backend();
  WithoutInjector plain(*cpu);
  EXPECT_EQ(fault_injector_of(plain), nullptr);
  auto [sticky, what] = fault_of(plain);
  EXPECT_FALSE(sticky);
  EXPECT_EQ(what, std::string("this backend cannot inject faults"));
  EXPECT_TRUE(cpu->recover());
}
