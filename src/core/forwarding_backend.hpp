// A Backend that forwards every call to another one: the base of decorators that change a few calls
// (the tuner's PlanRecorder; test doubles that script timers or drift).
#pragma once
#include "core/backend.hpp"

namespace ab {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : b_(inner) {}
  Backend& inner() { return b_; }

  BackendKind kind() const override { return b_.kind(); }
  DeviceInfo device_info() const override { return b_.device_info(); }
  void* alloc(std::size_t bytes) override { return b_.alloc(bytes); }
  void free(void* p) override { b_.free(p); }
  void upload(void* dst, const void* src, std::size_t bytes) override { b_.upload(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { b_.download(dst, src, bytes); }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes) override { b_.fill_bytes(dst, value, bytes); }
  void synchronize() override { b_.synchronize(); }

  GemmPlanId make_gemm_plan(const GemmShape& shape) override { return b_.make_gemm_plan(shape); }
  void gemm(GemmPlanId plan, const void* a, const void* b, void* c, float alpha, float beta) override {
    b_.gemm(plan, a, b, c, alpha, beta);
  }
  void release_gemm_plans() override { b_.release_gemm_plans(); }
  nlohmann::json gemm_plan_report() const override { return b_.gemm_plan_report(); }
  GemmShape gemm_plan_shape(GemmPlanId plan) const override { return b_.gemm_plan_shape(plan); }
  std::vector<GemmAlgo> gemm_candidates(GemmPlanId plan, int top, bool exhaustive) override {
    return b_.gemm_candidates(plan, top, exhaustive);
  }
  void set_gemm_algo(GemmPlanId plan, const GemmAlgo& algo, const std::string& source) override {
    b_.set_gemm_algo(plan, algo, source);
  }
  void set_gemm_chooser(GemmAlgoChooser chooser) override { b_.set_gemm_chooser(std::move(chooser)); }

  void softmax_update(const SoftmaxUpdateArgs& a) override { b_.softmax_update(a); }
  void page_softmax(const PageSoftmaxArgs& a) override { b_.page_softmax(a); }
  void combine_pages(const CombineArgs& a) override { b_.combine_pages(a); }
  void finalize(const FinalizeArgs& a) override { b_.finalize(a); }
  void gather_pages(const GatherArgs& a) override { b_.gather_pages(a); }

  std::vector<FusedTile> fused_tiles() const override { return b_.fused_tiles(); }
  std::string fused_can_implement(const Problem& p, const FusedTile& tile) const override {
    return b_.fused_can_implement(p, tile);
  }
  void fused_attention(const Problem& p, const AttentionIO& io, const FusedTile& tile) override {
    b_.fused_attention(p, io, tile);
  }
  void reference_attention(const Problem& p, const AttentionIO& io, float* out) override {
    b_.reference_attention(p, io, out);
  }
  std::string reference_name() const override { return b_.reference_name(); }
  ErrorStats compare_to_reference(const Problem& p, const void* out, const float* ref) override {
    return b_.compare_to_reference(p, out, ref);
  }

  std::unique_ptr<DeviceTimer> make_timer() override { return b_.make_timer(); }
  void flush_l2() override { b_.flush_l2(); }
  std::unique_ptr<CapturedForward> capture(const std::function<void()>& forward) override {
    return b_.capture(forward);
  }
  void begin_launch_count() override { b_.begin_launch_count(); }
  LaunchRecord end_launch_count() override { return b_.end_launch_count(); }
  int current_sm_clock_mhz() override { return b_.current_sm_clock_mhz(); }
  void range_push(const std::string& name) override { b_.range_push(name); }
  void range_pop() override { b_.range_pop(); }
  bool recover() override { return b_.recover(); }
  void inject_fault() override { b_.inject_fault(); }
  void inject_delay(double ms) override { b_.inject_delay(ms); }
  void relocate_buffers(std::uint64_t salt) override { b_.relocate_buffers(salt); }

 protected:
  Backend& b_;
};

}  // namespace ab
