// CUPTI activity buffers: requested/completed callbacks fill a process-wide record list that a counting
// window clears, enables, flushes and reads.
#include "backends/cuda/cupti_counter.hpp"

#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include <fmt/format.h>

namespace ab::cuda {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kAlign = 8;

struct Record {
  std::string name;
  std::uint64_t start, end;
};

struct Collector {
  std::mutex mu;
  std::vector<Record> records;
  std::int64_t dropped = 0;
  bool registered = false;
  std::string init_error;
};

Collector& collector() {
  static Collector* c = new Collector();  // leaked: CUPTI may call back during static destruction
  return *c;
}

std::string cupti_text(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return fmt::format("CUPTI error {}", static_cast<int>(r));
  return s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  void* p = std::aligned_alloc(kAlign, kBufferBytes);
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid) {
  (void)size;
  Collector& c = collector();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
      if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        c.records.push_back({readable_kernel_name(k->name), k->start, k->end});
      }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS) c.dropped += static_cast<std::int64_t>(dropped);
  }
  std::free(buffer);
}

}  // namespace

std::string readable_kernel_name(const char* raw) {
  if (!raw) return "?";
  std::string s = raw;
  int status = -1;
  char* dem = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
  if (status == 0 && dem) s = dem;
  std::free(dem);
  const std::string anon = "(anonymous namespace)::";
  for (std::size_t pos; (pos = s.find(anon)) != std::string::npos;) s.erase(pos, anon.size());
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  int depth = 0;  // cut the parameter list: the first '(' outside template brackets
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') depth++;
    else if (s[i] == '>') depth--;
    else if (s[i] == '(' && depth == 0 && i > 0) {
      s.resize(i);
      break;
    }
  }
  return s;
}

CuptiCounter::CuptiCounter() {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.registered && c.init_error.empty()) {
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r == CUPTI_SUCCESS) c.registered = true;
    else c.init_error = "cuptiActivityRegisterCallbacks: " + cupti_text(r);
  }
  error_ = c.init_error;
}

void CuptiCounter::begin() {
  if (!available()) return;
  if (enabled_) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    enabled_ = false;
  }
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  {
    Collector& c = collector();
    std::lock_guard<std::mutex> lock(c.mu);
    c.records.clear();
    c.dropped = 0;
  }
  CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    error_ = "cuptiActivityEnable(CONCURRENT_KERNEL): " + cupti_text(r);
    return;
  }
  enabled_ = true;
}

KernelWindow CuptiCounter::end() {
  KernelWindow w;
  if (!available() || !enabled_) {
    w.error = error_.empty() ? "begin_launch_count was not called" : error_;
    return w;
  }
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  enabled_ = false;
  if (r != CUPTI_SUCCESS) {
    w.error = "cuptiActivityFlushAll: " + cupti_text(r);
    return w;
  }
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  std::vector<std::string> order;
  std::map<std::string, std::int64_t> counts;
  std::map<std::string, double> name_ns;
  double ns = 0;
  for (const Record& rec : c.records) {
    if (counts[rec.name]++ == 0) order.push_back(rec.name);
    double d = rec.end > rec.start ? static_cast<double>(rec.end - rec.start) : 0.0;
    ns += d;
    name_ns[rec.name] += d;
  }
  w.available = true;
  w.kernels = static_cast<std::int64_t>(c.records.size());
  for (const auto& n : order) {
    w.names.push_back(fmt::format("{} x{}", n, counts[n]));
    w.name_time_ms.push_back(name_ns[n] * 1e-6);
  }
  w.kernel_time_ms = ns * 1e-6;
  w.dropped = c.dropped;
  c.records.clear();
  return w;
}

}  // namespace ab::cuda
