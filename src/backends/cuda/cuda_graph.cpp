// CUDA-graph capture of a forward (cudaStreamBeginCapture / EndCapture / Instantiate) and its replay.
#include "backends/cuda/cuda_graph.hpp"

#include <cuda_runtime.h>

#include "backends/cuda/cuda_check.hpp"
#include "core/errors.hpp"

namespace ab::cuda {

namespace {

class GraphForward : public CapturedForward {
 public:
  GraphForward(cudaGraph_t g, cudaGraphExec_t e, cudaStream_t s) : graph_(g), exec_(e), stream_(s) {}
  ~GraphForward() override {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  void replay() override { AB_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

// Ends a capture that went wrong and drops what it made.
void abandon_capture(cudaStream_t s) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(s, &g);
    if (g) cudaGraphDestroy(g);
  }
  (void)cudaGetLastError();
}

}  // namespace

std::unique_ptr<CapturedForward> capture_graph(void* stream, const std::function<void()>& forward, std::string* why) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  (void)cudaGetLastError();
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    *why = "cudaStreamBeginCapture: " + cuda_error_text(e);
    (void)cudaGetLastError();
    return nullptr;
  }
  try {
    forward();
  } catch (const BackendError& err) {
    abandon_capture(s);
    if (err.sticky) throw;
    *why = std::string("the forward failed under capture: ") + err.what();
    return nullptr;
  } catch (const std::exception& err) {
    abandon_capture(s);
    *why = std::string("the forward failed under capture: ") + err.what();
    return nullptr;
  }
  cudaGraph_t graph = nullptr;
  e = cudaStreamEndCapture(s, &graph);
  if (e != cudaSuccess || !graph) {
    *why = "cudaStreamEndCapture: " + cuda_error_text(e);
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, graph, 0);
  if (e != cudaSuccess) {
    *why = "cudaGraphInstantiate: " + cuda_error_text(e);
    cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return nullptr;
  }
  return std::make_unique<GraphForward>(graph, exec, s);
}

}  // namespace ab::cuda
