// A Measurement's fields in a report result row (docs/report-format.md).
#include "measure/measure.hpp"

namespace ab {

nlohmann::json measurement_to_json(const Measurement& m) {
  nlohmann::json j = {{"time_ms", m.gpu.to_json()},
                      {"host_ms", m.host.to_json()},
                      {"timer", m.timer},
                      {"stop_reason", m.stop_reason},
                      {"sm_clock_mhz", m.sm_clock_mhz}};
  if (!m.samples.empty()) j["samples_ms"] = m.samples;
  return j;
}

}  // namespace ab
