// A CSV file that fused_dev's modes append rows to (bench's timings, ctas' per-CTA records), closed when it
// goes out of scope. An empty path opens nothing (f stays nullptr); so does a path that cannot be opened,
// which the caller reports.
#pragma once
#include <cstdio>
#include <string>

namespace ab::fused_dev {

struct CsvFile {
  std::FILE* f = nullptr;
  explicit CsvFile(const std::string& path) : f(path.empty() ? nullptr : std::fopen(path.c_str(), "a")) {}
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  ~CsvFile() {
    if (f) std::fclose(f);
  }
};

}  // namespace ab::fused_dev
