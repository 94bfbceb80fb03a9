# The CI perf gate's measurement settings, sourced by scripts/ci-perf.sh and scripts/gate-study.sh so that
# the gate and the study of its false-alarm rate and power run the same way (docs/ci-gate.md): CUDA-graph
# replay (launch jitter out of the times), 20 rounds each on freshly placed inputs (the between-process
# spread inside one run), at least 20 samples and at most 0.2 s per round. GATE_FLAGS replaces them.
ATTNBENCH_GATE_FLAGS=${GATE_FLAGS:-"--timer=graph --rounds=20 --min_samples=20 --max_time=0.2"}
