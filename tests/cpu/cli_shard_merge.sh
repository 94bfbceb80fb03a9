#!/usr/bin/env bash
# Shards and merge (issue 17, points 2 and 3), with the real binary on the CPU backend: --shard=i/N and the
# Slurm and Kubernetes environment defaults split an awkward grid into parts whose union is the grid with no
# problem twice; `merge` of the shard reports has exactly the rows of one unsharded run, in grid order; bad
# shard specs and merge inputs that do not belong together get one line, exit 2 and no output file; tune
# caches of shards merge. Usage: cli_shard_merge.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
source "$src/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
rows() { python3 "$src/tests/cpu/rows_of.py" "$@"; }
# Lengths not a multiple of a page, a short last page, B=1, H=1, one KV head, q_len=1, causal, fp16 and bf16.
axes=(--batch=1,2 --heads=2 --kv_heads=1 --seq_len=13,40 --pages=1,3 --q_len=1 --head_dim=8 --causal=false,true
      --dtype=fp16,bf16)
grid=(--backend=cpu --quiet --no_table "${axes[@]}" --verify --warmup=0 --min_samples=1 --max_samples=2)
tune_small=(--backend=cpu "${axes[@]}" --strategies=fused --warmup=0 --min_samples=1)
n=$("$bin" grid "${axes[@]}" --format=json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[[ $n -eq 32 ]] && ok || bad "grid size $n, wanted 32"

"$bin" "${grid[@]}" --json=whole.json || bad "unsharded run failed"
# Shard 1 reports another copy bandwidth (a measured rate, which differs from process to process; ctest hands
# the others a fixed one, tests/CMakeLists.txt): merge must not take it for another device.
for i in 0 1 2; do
  rate=${ATTNBENCH_HOST_COPY_GBPS:-}  # empty: measured
  [[ $i -eq 1 ]] && rate=7.5
  ATTNBENCH_HOST_COPY_GBPS=$rate "$bin" "${grid[@]}" --shard=$i/3 --json=s$i.json || bad "shard $i/3 failed"
done
python3 -c 'import json; r=[json.load(open("s%d.json" % i))["device"]["copy_bandwidth_gbps"] for i in (0, 1)]; assert r[1] == 7.5 != r[0], r' &&
  ok || bad "shards 0 and 1 do not report different copy bandwidths"
# Every shard did some work, none the whole grid, no problem twice, and together all of them.
for i in 0 1 2; do
  k=$(rows s$i.json | wc -l)
  [[ $k -gt 0 && $k -lt $(rows whole.json | wc -l) ]] && ok || bad "shard $i/3 has $k rows"
done
[[ $(rows s0.json s1.json s2.json | sort | uniq -d | wc -l) -eq 0 ]] && ok || bad "a row in two shards"
diff <(rows whole.json) <(rows s0.json s1.json s2.json) >/dev/null && ok || bad "shards' union differs from the grid"
python3 -c 'import json,sys; s=json.load(open("s1.json"))["shard"]; sys.exit(not (s["index"]==1 and s["count"]==3 and s["grid_size"]==32 and len(s["problems"])>0))' &&
  ok || bad "the report header does not record the shard"

# merge: the same rows as the unsharded run, in the same (grid) order, from the shards in any order.
"$bin" merge merged.json s2.json s0.json s1.json >merge.txt 2>stderr.txt || bad "merge failed: $(cat stderr.txt)"
grep -q "merged $(rows whole.json | wc -l) rows from 3 report(s)" merge.txt && ok || bad "merge summary: $(cat merge.txt)"
diff <(rows --ordered whole.json) <(rows --ordered merged.json) >/dev/null && ok || bad "merged rows differ from the unsharded run's"
python3 -c 'import json,sys; d=json.load(open("merged.json")); sys.exit("shard" in d or len(d["merged_from"])!=3)' && ok ||
  bad "merged header"
"$bin" report merged.json --format=csv >/dev/null && ok || bad "the merged report does not read back"
"$bin" compare whole.json merged.json --threshold=1000% >/dev/null 2>&1; [[ $? -ne 2 ]] && ok || bad "compare refuses the merged report"

# The schedulers' variables pick the same shards as the flag.
SLURM_ARRAY_TASK_ID=11 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=3 "$bin" "${grid[@]}" --json=slurm1.json || bad "slurm shard"
diff <(rows slurm1.json) <(rows s1.json) >/dev/null && ok || bad "SLURM_ARRAY_TASK_ID=11 (min 10) is not shard 1/3"
JOB_COMPLETION_INDEX=2 ATTNBENCH_SHARD_COUNT=3 "$bin" "${grid[@]}" --json=k8s2.json || bad "k8s shard"
diff <(rows k8s2.json) <(rows s2.json) >/dev/null && ok || bad "JOB_COMPLETION_INDEX=2 is not shard 2/3"
JOB_COMPLETION_INDEX=2 ATTNBENCH_SHARD_COUNT=3 "$bin" "${grid[@]}" --shard=0/1 --json=flagwins.json || bad "--shard=0/1"
diff <(rows flagwins.json) <(rows whole.json) >/dev/null && ok || bad "--shard does not win over the environment"
JOB_COMPLETION_INDEX=0 ATTNBENCH_SHARD_COUNT=2 "$bin" tune "${tune_small[@]}" --cache=k8s_cache.json >/dev/null 2>stderr.txt &&
  grep -q "shard 0/2" stderr.txt && ok || bad "tune does not take its shard from JOB_COMPLETION_INDEX"

# Bad shard specs: one line, exit 2, no report.
expect_exit 2 "--shard=3/3: shard index 3 is out of range" "$bin" "${grid[@]}" --shard=3/3 --json=no.json
expect_exit 2 "is not INDEX/COUNT" "$bin" "${grid[@]}" --shard=one/3 --json=no.json
expect_exit 2 "the shard count must be between" "$bin" "${grid[@]}" --shard=0/0 --json=no.json
expect_exit 2 "ATTNBENCH_SHARD_COUNT is not" env JOB_COMPLETION_INDEX=1 "$bin" "${grid[@]}" --json=no.json
expect_exit 2 "out of range" env JOB_COMPLETION_INDEX=5 ATTNBENCH_SHARD_COUNT=3 "$bin" "${grid[@]}" --json=no.json
expect_exit 2 "SLURM_ARRAY_TASK_COUNT is not" env SLURM_ARRAY_TASK_ID=0 "$bin" "${grid[@]}" --json=no.json
expect_exit 2 "--shard=2/2: shard index 2 is out of range" "$bin" tune "${tune_small[@]}" --shard=2/2 --cache=no.json
[[ ! -e no.json && ! -e no.json.journal ]] && ok || bad "a refused run left a file behind"

# Merge inputs that do not belong together: one line, exit 2, no output.
"$bin" "${grid[@]}" --shard=0/3 --seed=7 --json=s0_seed7.json || bad "seeded shard"
"$bin" "${grid[@]}" --shard=0/2 --json=h0.json || bad "shard 0/2"
expect_exit 2 "different settings (seed" "$bin" merge out.json s0_seed7.json s1.json s2.json
expect_exit 2 "both have the row" "$bin" merge out.json whole.json whole.json
expect_exit 2 "are both shard 1/3" "$bin" merge out.json s1.json s1.json
expect_exit 2 "shard 0/2 of a 32-problem grid" "$bin" merge out.json s1.json h0.json
expect_exit 2 "is not a shard report" "$bin" merge out.json whole.json s1.json
expect_exit 2 "also an input" "$bin" merge s0.json s0.json s1.json
expect_exit 2 "is a shard's report; name a new file" "$bin" merge s0.json s1.json s2.json
expect_exit 2 "reports and caches do not merge" "$bin" merge out.json s0.json k8s_cache.json
python3 -c 'import json; d=json.load(open("s2.json")); d["tool"]["version"]="0.0.1"; json.dump(d,open("old.json","w"))'
expect_exit 2 "different tool versions" "$bin" merge out.json s0.json s1.json old.json
python3 -c 'import json; d=json.load(open("s2.json")); d["interrupted"]="SIGTERM"; json.dump(d,open("cut.json","w"))'
expect_exit 2 "is an interrupted run (SIGTERM)" "$bin" merge out.json s0.json s1.json cut.json
python3 -c 'import json; d=json.load(open("s2.json")); d["device"]["name"]="Other GPU"; json.dump(d,open("other.json","w"))'
expect_exit 2 "numbers of different devices do not compare" "$bin" merge out.json s0.json s1.json other.json
[[ ! -e out.json ]] && ok || bad "a refused merge left out.json"
# A missing shard merges, and says so in the report and on stderr.
"$bin" merge part.json s0.json s2.json >/dev/null 2>stderr.txt && grep -q "shard(s) 1/3 missing" stderr.txt &&
  grep -q "shard(s) 1/3 missing" part.json && ok || bad "a missing shard is not reported"

# Tune caches: the shards' caches merge into one holding every shard's entries.
tgrid=(--backend=cpu --quiet --batch=1 --heads=2 --seq_len=13,40,64 --head_dim=8 --strategies=fused,head_batched
       --warmup=0 --min_samples=1)
"$bin" tune "${tgrid[@]}" --cache=tune_whole.json >/dev/null || bad "tune"
for i in 0 1; do "$bin" tune "${tgrid[@]}" --shard=$i/2 --cache=tune_s$i.json >/dev/null || bad "tune shard $i"; done
"$bin" merge tune_merged.json tune_s0.json tune_s1.json --on_conflict=fastest >merge.txt 2>stderr.txt || bad "cache merge: $(cat stderr.txt)"
keys() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(e["key"] for e in d.get("gemm",[])+d.get("fused",[])))' "$1"; }
[[ "$(keys tune_whole.json)" == "$(keys tune_merged.json)" ]] && ok || bad "merged cache keys differ: $(keys tune_whole.json) vs $(keys tune_merged.json)"
"$bin" "${tgrid[@]:0:6}" --cache=tune_merged.json --no_table >/dev/null 2>&1 && ok || bad "a run does not load the merged cache"
python3 -c 'import json; d=json.load(open("tune_s1.json")); d["tool"]["version"]="0.0.1"; json.dump(d,open("tune_old.json","w"))'
expect_exit 2 "caches of different tool versions" "$bin" merge tune_out.json tune_s0.json tune_old.json
finish
