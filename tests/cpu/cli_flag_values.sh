#!/usr/bin/env bash
# Flag values that used to get through (issue 16, finding 8), each refused by run (and tune where it has
# the flag) with one line and exit 2 before any work. Usage: cli_flag_values.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
small=(--backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused)

for cmd in run tune; do
  extra=()
  [[ $cmd == tune ]] && extra=(--cache=c.json)
  expect_exit 2 "--max_time: 'inf' must be a number of seconds above 0" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_time=inf
  expect_exit 2 "--max_time: '-1' must be a number of seconds above 0" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_time=-1
  expect_exit 2 "--max_time: '0' must be" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_time=0
  expect_exit 2 "--max_time: 'nan' must be" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_time=nan
  expect_exit 2 "--max_time: '1s' is not a number" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_time=1s
  expect_exit 2 "--max_memory: '1e30' is more than 4 EiB" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_memory=1e30
  expect_exit 2 "--max_memory: '0.5' is less than one byte" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_memory=0.5
  expect_exit 2 "--seed: must be 0 or more, got -1" "$bin" $cmd "${small[@]}" "${extra[@]}" --seed=-1
  expect_exit 2 "--max_noise: '200%' is more than 100%" "$bin" $cmd "${small[@]}" "${extra[@]}" --max_noise=200%
  expect_exit 2 "--warmup must be between 0 and 10000, got 2147483647" "$bin" $cmd "${small[@]}" "${extra[@]}" --warmup=2147483647
  expect_exit 2 "--batch: 1 is listed more than once in '1,1,1'" "$bin" $cmd "${small[@]}" "${extra[@]}" --batch=1,1,1
  expect_exit 2 "--batch: 2 is listed more than once" "$bin" $cmd "${small[@]}" "${extra[@]}" --batch=2,1:4:*2
  expect_exit 2 "--dtype: 'fp16' is listed more than once" "$bin" $cmd "${small[@]}" "${extra[@]}" --dtype=fp16,bf16,fp16
  expect_exit 2 "the grid has problem B=1 H=1 S=10 D=8 P=5 ps=2" "$bin" $cmd "${small[@]}" "${extra[@]}" --seq_len=10 --pages=5,6
  expect_exit 2 "twice" "$bin" $cmd "${small[@]}" "${extra[@]}" --causal --seq_len=10 --pages=5,6
  [[ ! -e c.json ]] && ok || bad "$cmd left c.json behind"
done
expect_exit 2 "--min_samples=50 is above --max_samples=10" "$bin" "${small[@]}" --min_samples=50 --max_samples=10
# The CI gate's flag and test hook (docs/ci-gate.md).
expect_exit 2 "--rounds must be between 1 and 1000" "$bin" "${small[@]}" --rounds=0
expect_exit 2 "--rounds must be between 1 and 1000" "$bin" "${small[@]}" --rounds=1001
ATTNBENCH_INJECT_SLOWDOWN=fast expect_exit 2 "ATTNBENCH_INJECT_SLOWDOWN: 'fast' is not a fraction" "$bin" "${small[@]}"
ATTNBENCH_INJECT_SLOWDOWN=fused=2000% expect_exit 2 "ATTNBENCH_INJECT_SLOWDOWN: '2000%' is outside 0 to 1000%" "$bin" "${small[@]}"
# Rounds through the real binary: every row says how many it ran, and a slowed run says it was slowed.
ATTNBENCH_INJECT_SLOWDOWN=fused=10% "$bin" "${small[@]}" --rounds=4 --min_samples=3 --json=r.json >/dev/null 2>stderr.txt &&
  python3 -c "
import json; r = json.load(open('r.json'))
row = r['results'][0]
assert row['rounds']['count'] == 4 and len(row['rounds']['medians_ms']) == 4 and row['rounds']['kept'] == 1, row
assert row['injected_slowdown']['fraction'] == 0.1 and 'noise_met' in row, row
assert r['settings']['rounds'] == 4 and r['settings']['injected_slowdown'] == 'fused=10%', r['settings']
assert any('deliberately slowed' in w for w in r['warnings']), r['warnings']
" && ok || bad "a run with rounds and a slowdown: $(cat stderr.txt)"
# The edges still run: 100%, the largest warm-up is accepted as a value (not run here), min == max.
"$bin" "${small[@]}" --max_noise=100% --min_samples=2 --max_samples=2 --warmup=0 --max_time=0.5 >/dev/null 2>stderr.txt && ok ||
  bad "edge values refused: $(cat stderr.txt)"
finish
