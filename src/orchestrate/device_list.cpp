// Parsing --devices and mapping a device index to the CUDA_VISIBLE_DEVICES value of its worker.
#include "orchestrate/device_list.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace ab {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

int parse_index(const std::string& text, const std::string& spec) {
  bool digits = !text.empty() && text.size() <= 6 &&
                std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (!digits)
    throw UsageError(fmt::format("--devices: '{}' in '{}' is not a device index (give all, or indices like 0,2)", text, spec));
  return std::stoi(text);
}

}  // namespace

std::vector<int> parse_device_list(const std::string& spec, int available) {
  if (spec.empty()) throw UsageError("--devices: give all, or device indices like 0,2");
  std::vector<int> devices;
  if (spec == "all") {
    if (available == 0) throw UsageError("--devices=all: no device is visible");
    for (int i = 0; i < std::max(available, 1); ++i) devices.push_back(i);
    return devices;
  }
  for (const std::string& part : split_commas(spec)) {
    int d = parse_index(part, spec);
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      throw UsageError(fmt::format("--devices: device {} is named twice in '{}'", d, spec));
    if (available >= 0 && d >= available)
      throw UsageError(fmt::format("--devices: device {} does not exist ({} device(s) visible{})", d, available,
                                   available > 0 ? fmt::format(": 0 to {}", available - 1) : std::string()));
    devices.push_back(d);
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

std::string visible_device_for(int index, const std::string& inherited) {
  if (inherited.empty()) return std::to_string(index);
  std::vector<std::string> visible = split_commas(inherited);
  if (index < 0 || static_cast<std::size_t>(index) >= visible.size())
    throw UsageError(fmt::format("--devices: device {} does not exist (CUDA_VISIBLE_DEVICES={} shows {})", index,
                                 inherited, visible.size()));
  return visible[static_cast<std::size_t>(index)];
}

}  // namespace ab
