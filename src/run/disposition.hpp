// What became of one strategy on one problem (cutlass_profiler's Disposition), as the report's "status".
#pragma once
#include <optional>
#include <string>

namespace ab {

enum class Disposition { ok, unsupported, incorrect, failed };

// "ok", "unsupported", "incorrect", "failed".
const char* to_string(Disposition d);
// The inverse of to_string; std::nullopt for any other text.
std::optional<Disposition> disposition_from_string(const std::string& text);
// incorrect and failed rows make `run` exit 1.
inline bool is_error(Disposition d) { return d == Disposition::incorrect || d == Disposition::failed; }

}  // namespace ab
