// --devices: which devices a run or tune spreads over ("all" or "0,2,..."), and the CUDA_VISIBLE_DEVICES
// value that pins a worker to one of them. Pure logic: no backend, no process.
#pragma once
#include <string>
#include <vector>

namespace ab {

// The device indices `spec` names, ascending and distinct. "all" is every one of `available` devices
// (0..available-1). When `available` is 0 or more, an index at or past it is refused; -1 means the count is
// not known (the CPU backend, whose workers are processes and take any index). Throws UsageError
// "--devices: ..." for an empty, malformed, repeated or absent index.
std::vector<int> parse_device_list(const std::string& spec, int available);

// The CUDA_VISIBLE_DEVICES value pinning a worker to device `index` as this process numbers devices: the
// index itself, or, when this process already sees a restricted list (`inherited`, the parent's
// CUDA_VISIBLE_DEVICES, e.g. "2,3" or GPU UUIDs from a scheduler), that list's entry at `index`. Throws
// UsageError when `inherited` has no such entry.
std::string visible_device_for(int index, const std::string& inherited);

}  // namespace ab
