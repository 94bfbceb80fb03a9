// Timer kind names: "events", "graph", "cupti".
#include "measure/measure.hpp"

namespace ab {

const char* timer_kind_name(TimerKind k) {
  switch (k) {
    case TimerKind::events: return "events";
    case TimerKind::graph: return "graph";
    case TimerKind::cupti: return "cupti";
  }
  return "?";
}

bool parse_timer_kind(const std::string& s, TimerKind* out) {
  for (TimerKind k : {TimerKind::events, TimerKind::graph, TimerKind::cupti})
    if (s == timer_kind_name(k)) {
      if (out) *out = k;
      return true;
    }
  return false;
}

}  // namespace ab
