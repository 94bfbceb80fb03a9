// Disposition names.
#include "run/disposition.hpp"

namespace ab {

const char* to_string(Disposition d) {
  switch (d) {
    case Disposition::ok: return "ok";
    case Disposition::unsupported: return "unsupported";
    case Disposition::incorrect: return "incorrect";
    case Disposition::failed: return "failed";
  }
  return "?";
}

std::optional<Disposition> disposition_from_string(const std::string& text) {
  for (Disposition d : {Disposition::ok, Disposition::unsupported, Disposition::incorrect, Disposition::failed})
    if (text == to_string(d)) return d;
  return std::nullopt;
}

}  // namespace ab
