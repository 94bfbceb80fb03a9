// A row's launches: the strategy's contract and, once counted, what ran, with the verdict on whether the
// count kept the contract (extra cuBLASLt split-K reduction kernels are explained, not a mismatch).
#pragma once
#include <optional>

#include "core/backend.hpp"
#include "core/strategy.hpp"
#include "run/result_row.hpp"

namespace ab {

RowLaunches summarize_launches(const LaunchContract& contract, const std::optional<LaunchRecord>& record);

}  // namespace ab
