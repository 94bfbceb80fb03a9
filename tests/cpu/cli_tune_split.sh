#!/usr/bin/env bash
# tune --devices with --search=exhaustive splits a problem's search below the problem (docs/scale-out-devices.md,
# "A tune split below the problem"), with the real binary on the CPU backend. ATTNBENCH_INJECT_CPU_GEMM_VARIANTS=9
# gives each GEMM shape 9 candidates (variant 6 the one clear winner) and --split_candidates=3 three screening
# units per shape: both workers screen each shape, the units are counted on the progress line, the cache holds the
# winners a one-process tune finds with the same seed, and a worker killed on one screening unit costs only that
# unit's candidates (reported, exit 1) while the rest of the tune completes. Each measurement takes the median of 7
# samples of about 0.25 ms: with 3, a one-process tune in a CI run on a 2-core machine, with a compiler running
# beside it, once chose an 8-repeat variant for one shape. Usage: cli_tune_split.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
export ATTNBENCH_INJECT_CPU_GEMM_VARIANTS=9
tune=(tune --backend=cpu --batch=1 --heads=2 --kv_heads=1 --seq_len=40,57 --head_dim=32 --search=exhaustive
      --strategies=head_batched,fully_batched --warmup=0 --min_samples=7 --max_time=0.05 --seed=7)

# What each cache chose: "key -> label candidates failed", one line per GEMM entry, sorted.
cat >winners.py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in sorted(d["gemm"], key=lambda e: e["key"]):
    print(e["key"], "->", e["algo"]["label"], e["candidates"], e["failed"])
PY

"$bin" "${tune[@]}" --quiet --cache=one.json >one.txt 2>&1 || bad "one-process tune: $(tail -3 one.txt)"
"$bin" "${tune[@]}" --devices=0,1 --split_candidates=3 --cache=two.json >two.txt 2>two.err
rc=$?
[[ $rc -eq 0 ]] && ok || bad "split tune over two workers (rc=$rc): $(tail -3 two.err)"
python3 winners.py one.json >one.win && python3 winners.py two.json >two.win
[[ $(grep -c '' one.win) -eq 4 && "$(cat one.win)" == "$(cat two.win)" ]] && ok \
  || bad "the split tune's winners differ from one process's: $(cat one.win) vs $(cat two.win)"
grep -q -- "-> cpu-variant 6 x1 9 0" two.win && ! grep -qv -- "-> cpu-variant 6 x1 9 0" two.win && ok \
  || bad "every shape's 9 candidates screened and variant 6 won: $(cat two.win)"
# 4 listing units (2 problems x 2 strategies), 4 shapes x 3 screening units, 4 finishing units (one per problem
# and strategy).
grep -q "\[20/20\] done" two.err && ok || bad "progress counts the 20 units: $(tail -2 two.err)"
[[ $(grep -c "^device [01]:$" two.txt) -eq 4 ]] && ok || bad "a summary per finishing unit: $(grep -c '^device' two.txt)"
grep -q "nothing was tuned" two.txt && grep -q "2 plan groups reused a shape tuned earlier" two.txt && ok \
  || bad "fully_batched's finishing unit leaves the shapes it shares to head_batched's: $(cat two.txt)"
[[ $(grep -c "candidates screened in 3 units on device(s) 0, 1" two.txt) -eq 4 ]] && ok \
  || bad "each shape split over both workers: $(grep 'screened in' two.txt)"

# A worker killed on unit 5 (problem 0's first shape, candidates 3-5): only those candidates are lost.
ATTNBENCH_INJECT_WORKER_KILL=5 "$bin" "${tune[@]}" --quiet --devices=0,1 --split_candidates=3 --cache=killed.json \
  >killed.txt 2>&1
rc=$?
[[ $rc -eq 1 ]] && ok || bad "a killed worker makes the tune exit 1 (rc=$rc): $(tail -3 killed.txt)"
grep -q "screening unit 5 (gemm .*candidates 3-5 of 9) lost: the worker on device [01] died while running it (killed by signal 9" \
  killed.txt && ok || bad "the lost unit is reported: $(grep -i lost killed.txt)"
python3 winners.py killed.json >killed.win
[[ $(grep -c -- "-> cpu-variant 6 x1 9 3$" killed.win) -eq 1 && $(grep -c -- "-> cpu-variant 6 x1 9 0$" killed.win) -eq 3 ]] \
  && ok || bad "the other units' candidates still tuned every shape: $(cat killed.win)"

# Bad input: one line, exit 2, no cache.
expect_exit 2 "--split_candidates must be at least 1" "$bin" "${tune[@]}" --devices=0,1 --split_candidates=0 --cache=bad.json
[[ ! -e bad.json ]] && ok || bad "a refused tune left a cache"
[[ -z "$(ls "$TMPDIR")" ]] && ok || bad "a pool directory was left: $(ls "$TMPDIR")"
finish
