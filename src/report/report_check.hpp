// Type checks of an attnbench.report/1 document when it is read, so that no reader (report, compare, the
// fresh-process merge) meets a mistyped field: a row that is not an object, `causal: "yes"`, a median that
// is a string. Missing fields stay allowed (the readers are tolerant of those).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace ab {

// Throws UsageError "ORIGIN: results[3].problem.causal must be true or false" for the first mistyped field.
void check_report_types(const nlohmann::json& doc, const std::string& origin);

}  // namespace ab
