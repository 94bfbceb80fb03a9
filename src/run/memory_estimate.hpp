// Memory estimates made before anything is allocated, shared by `run` and `tune`: the limit, a problem's
// tensors on a backend (with what the backend stages beside them), and a strategy's workspace against what
// is left. Sizes saturate (core/sizes.hpp), so an estimate never wraps below the truth.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace ab {

// The bytes a run may use: max_memory when > 0, else the device's free memory (its total when unknown).
std::int64_t memory_limit(const DeviceInfo& dev, std::int64_t max_memory);

// Bytes the problem's inputs, output and reference need on the backend (excluding strategy workspace),
// plus what the backend stages in the same memory while preparing them (Backend::input_staging_bytes).
std::int64_t input_bytes(const Backend& backend, const Problem& p, bool verify);

// Throws UsageError when a problem's inputs alone exceed the limit (checked before anything is allocated).
void check_memory_or_throw(const Backend& backend, const std::vector<Problem>& problems, bool verify, std::int64_t limit);

// Why `workspace` bytes do not fit beside `used` under `limit` ("" when they do).
std::string workspace_refusal(std::int64_t used, std::int64_t workspace, std::int64_t limit);

}  // namespace ab
