// Decorators of the backend seam: a Backend that is another one with some of its interfaces substituted
// (the tuner's PlanRecorder substitutes the GEMM engine; test doubles substitute timers or memory), and
// one forwarding base per interface for substitutes that change a few calls.
#pragma once
#include "core/backend.hpp"

namespace ab {

// `inner`'s device and interfaces, until replaced. kind, device_info and recover forward to `inner`.
class ComposedBackend : public Backend {
 public:
  explicit ComposedBackend(Backend& inner) : inner_(inner) { set_parts(inner.parts()); }
  Backend& inner() { return inner_; }
  BackendKind kind() const override { return inner_.kind(); }
  DeviceInfo device_info() const override { return inner_.device_info(); }
  bool recover() override { return inner_.recover(); }

 protected:
  void replace_memory(DeviceMemory& m) { with([&](Parts& p) { p.memory = &m; }); }
  void replace_gemm(GemmEngine& g) { with([&](Parts& p) { p.gemm = &g; }); }
  void replace_kernels(AttentionKernels& k) { with([&](Parts& p) { p.kernels = &k; }); }
  void replace_verifier(Verifier& v) { with([&](Parts& p) { p.verifier = &v; }); }
  void replace_profiler(Profiler& f) { with([&](Parts& p) { p.profiler = &f; }); }

 private:
  template <class F> void with(F change) {
    Parts p = parts();
    change(p);
    set_parts(p);
  }
  Backend& inner_;
};

class ForwardingMemory : public DeviceMemory {
 public:
  explicit ForwardingMemory(DeviceMemory& inner) : m_(inner) {}
  void* alloc(std::size_t bytes) override { return m_.alloc(bytes); }
  void free(void* p) override { m_.free(p); }
  void upload(void* dst, const void* src, std::size_t bytes) override { m_.upload(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { m_.download(dst, src, bytes); }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override { m_.fill_bytes(dst, value, bytes); }
  void fill_random(void* dst, const RandomFill& fill) override { m_.fill_random(dst, fill); }
  void synchronize() override { m_.synchronize(); }
  std::int64_t input_staging_bytes(const Problem& p, bool with_reference) const override {
    return m_.input_staging_bytes(p, with_reference);
  }
  void relocate_buffers(std::uint64_t salt) override { m_.relocate_buffers(salt); }

 protected:
  DeviceMemory& m_;
};

// Plans made through it belong to (and are released by) the inner engine: a forwarding engine sees
// every plan made and run, and may die before the plans.
class ForwardingGemmEngine : public GemmEngine {
 public:
  explicit ForwardingGemmEngine(GemmEngine& inner) : g_(inner) {}
  GemmPlan make_plan(const GemmShape& shape) override { return g_.make_plan(shape); }
  using GemmEngine::run;
  void run(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    g_.run(plan, a, b, c, alpha, beta);
  }
  std::vector<GemmPlanChoice> plan_report() const override { return g_.plan_report(); }
  GemmShape plan_shape(GemmPlanId plan) const override { return g_.plan_shape(plan); }
  std::vector<GemmAlgo> candidates(GemmPlanId plan, int top, bool exhaustive) override {
    return g_.candidates(plan, top, exhaustive);
  }
  void set_algo(GemmPlanId plan, const GemmAlgo& algo, const std::string& source) override {
    g_.set_algo(plan, algo, source);
  }
  void set_chooser(Chooser chooser) override { g_.set_chooser(std::move(chooser)); }

 protected:
  void release_plan(GemmPlanId) noexcept override {}  // never called: the inner engine owns the plans
  GemmEngine& g_;
};

class ForwardingKernels : public AttentionKernels {
 public:
  explicit ForwardingKernels(AttentionKernels& inner) : k_(inner) {}
  void softmax_update(const SoftmaxUpdateArgs& a) override { k_.softmax_update(a); }
  void page_softmax(const PageSoftmaxArgs& a) override { k_.page_softmax(a); }
  void combine_pages(const CombineArgs& a) override { k_.combine_pages(a); }
  void finalize(const FinalizeArgs& a) override { k_.finalize(a); }
  void gather_pages(const GatherArgs& a) override { k_.gather_pages(a); }
  std::vector<std::string> runs_variants() const override { return k_.runs_variants(); }
  std::vector<FusedTile> fused_tiles() const override { return k_.fused_tiles(); }
  std::string fused_can_implement(const Problem& p, const FusedTile& tile) const override {
    return k_.fused_can_implement(p, tile);
  }
  int fused_decode_ctas_per_sm(const Problem& p, const FusedTile& tile) const override {
    return k_.fused_decode_ctas_per_sm(p, tile);
  }
  void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile, void* workspace,
                       std::int64_t workspace_bytes) override {
    k_.fused_attention(p, io, tile, workspace, workspace_bytes);
  }

 protected:
  AttentionKernels& k_;
};

class ForwardingVerifier : public Verifier {
 public:
  explicit ForwardingVerifier(Verifier& inner) : v_(inner) {}
  void reference_attention(const Problem& p, const AttentionIO& io, float* out) override {
    v_.reference_attention(p, io, out);
  }
  std::string reference_name() const override { return v_.reference_name(); }
  ErrorStats compare_to_reference(const Problem& p, const void* out, const float* ref) override {
    return v_.compare_to_reference(p, out, ref);
  }

 protected:
  Verifier& v_;
};

class ForwardingProfiler : public Profiler {
 public:
  explicit ForwardingProfiler(Profiler& inner) : f_(inner) {}
  std::unique_ptr<DeviceTimer> make_timer() override { return f_.make_timer(); }
  void flush_l2() override { f_.flush_l2(); }
  std::unique_ptr<CapturedForward> capture(const std::function<void()>& forward) override {
    return f_.capture(forward);
  }
  void begin_launch_count() override { f_.begin_launch_count(); }
  LaunchRecord end_launch_count() override { return f_.end_launch_count(); }
  int current_sm_clock_mhz() override { return f_.current_sm_clock_mhz(); }
  void range_push(const std::string& name) override { f_.range_push(name); }
  void range_pop() override { f_.range_pop(); }
  void enqueue_delay(double ms) override { f_.enqueue_delay(ms); }

 protected:
  Profiler& f_;
};

}  // namespace ab
