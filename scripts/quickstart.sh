#!/usr/bin/env bash
# Quick start, step 1: install what the build needs, build the attnbench binary alone, and run the main job: the
# default problem (B=32 H=12 S=512 D=64, fp16) through every strategy with verification.
#  - Without a GPU: a CPU-only build (no CUDA code, no tests, no development harness; one unity file per library),
#    and the main job on the CPU reference backend (CPU times, not GPU times) at a smaller shape, since the fp64
#    reference backend needs minutes for the full one.
#  - With a GPU and nvcc: the CUDA backend for this GPU's architecture only (sm_90a on Hopper) and each head_dim's
#    default fused tile (ATTNBENCH_ALL_TILES=OFF), again without the tests and the development harness
#    (tools/fused_dev, ATTNBENCH_FUSED_DEV).
# scripts/test.sh later configures the same build/ folder back to the full build and builds the rest, still as unity
# files (fast from scratch, slow after an edit: ATTNBENCH_FAST_BUILD=0 scripts/build.sh goes back to one object per
# file).
# Extra arguments go to CMake (e.g. -DCMAKE_CUDA_ARCHITECTURES=90a). ATTNBENCH_GPU=0 builds for the CPU even where
# a GPU is seen, ATTNBENCH_GPU=1 builds the CUDA backend where none is seen (a GPU is seen when `nvidia-smi -L`
# lists one or /dev/nvidia0 exists).
set -euo pipefail
cd "$(dirname "$0")/.."
t_start=$(date +%s)
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# about WORK CHAIN: the build's estimated time, from WORK seconds of compiler work spread over the cores and at
# least the CHAIN seconds of its longest run of steps one after another.
about() {
  local s=$(( $1 / cores )) m
  (( s < $2 )) && s=$2
  m=$(( (s + 30) / 60 ))
  if (( m <= 1 )); then echo "about a minute"; else echo "about $m minutes"; fi
}

scripts/install-deps.sh --build-only
t_deps=$(date +%s)

if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
gpu=""
if nvidia-smi -L 2>/dev/null | grep -q '^GPU' || [[ -e /dev/nvidia0 ]]; then gpu=yes; fi
case "${ATTNBENCH_GPU:-}" in 0) gpu="" ;; 1) gpu=yes ;; esac
cores=$(nproc)
# What every quick-start build leaves out; scripts/test.sh turns each back on.
opts=(-DBUILD_TESTING=OFF -DATTNBENCH_FUSED_DEV=OFF)
if [[ -n "$gpu" ]] && command -v "${CUDACXX:-nvcc}" >/dev/null; then
  what="the CUDA backend"
  opts+=(-DATTNBENCH_CUDA=ON -DATTNBENCH_ALL_TILES=OFF)  # each head_dim's default tile; test.sh builds them all
  # This GPU's architecture only (CMakeLists.txt's default adds a portable compute_80 PTX target, twice the work):
  # sm_90a on compute capability 9.0 (the Hopper wgmma tiles need it), else the GPU's own, where nvcc knows it.
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .') || cap=""
  [[ "$cap" == 90 ]] && arch=90a || arch=$cap
  if [[ -n "$arch" ]] && "${CUDACXX:-nvcc}" --list-gpu-arch 2>/dev/null | grep -qx "compute_${cap}"; then
    opts+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
    what+=" for sm_$arch"
  fi
  # Measured on a 16-core H100 machine (no ccache): 330 s of compiler work, the longest chain 47 s; 52 s in all.
  echo "building ${what}: $(about 330 50) on $cores cores"
else
  what="the CPU-only binary"
  [[ -n "$gpu" ]] && echo "a GPU is present but nvcc is not found: building the CPU reference backend only"
  opts+=(-DATTNBENCH_CUDA=OFF)
  # Measured on 2-core machines (no ccache): 150-240 s of compiler work; 1m25s to 2m12s in all.
  echo "building ${what} (no GPU here): $(about 240 50) on $cores cores"
fi
ATTNBENCH_FAST_BUILD=1 BUILD_TARGETS=attnbench scripts/build.sh "${opts[@]}" "$@"
t_build=$(date +%s)
echo "built ${what} in $(mmss $((t_build - t_deps)))"

if grep -q 'cuda:' <<<"$(./build/attnbench list)"; then  # not a pipe: grep -q's early exit fails it under pipefail
  ./build/attnbench --batch=32 --heads=12 --seq_len=512 --verify --json=attnbench-report.json
else
  ./build/attnbench --batch=4 --heads=12 --seq_len=256 --pages=1,4 --verify --json=attnbench-report.json
fi
t_run=$(date +%s)
echo "report written to attnbench-report.json"
echo "quick start: dependencies $(mmss $((t_deps - t_start))), build $(mmss $((t_build - t_deps))) (${what}," \
     "$cores cores), main job $(mmss $((t_run - t_build))); total $(mmss $((t_run - t_start)))"
echo "scripts/test.sh builds the rest (tests, the development harness) and runs every test"
