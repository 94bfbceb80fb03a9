#!/usr/bin/env bash
# Runs that survive interruption (issue 17, point 4), with the real binary on the CPU backend: SIGTERM and
# SIGINT stop a run mid-grid, which writes a complete report of the problems that finished, marked
# interrupted, and exits 128+signal; `--resume` skips what the journal holds and ends with exactly the rows
# of an uninterrupted run; after SIGKILL the journal still holds every finished problem; tune does the same
# for its cache; a journal from another command, version or settings is refused (one line, exit 2).
# Usage: cli_interrupt_resume.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
source "$src/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
rows() { python3 "$src/tests/cpu/rows_of.py" "$@"; }
entries() { [[ -f $1 ]] && echo $(($(grep -c '' "$1") - 1)) || echo 0; }
# Waits (up to 30 s) until journal $1 holds at least $2 finished problems.
wait_for_entries() {
  for _ in $(seq 300); do
    [[ $(entries "$1") -ge $2 ]] && return 0
    sleep 0.1
  done
  return 1
}
# 10 problems (a short last page, B=1, H=1, one KV head, q_len=1, causal, bf16), each strategy timed for
# 0.1 s (noise target 0: every point runs to --max_time), so a run takes a few seconds.
grid=(--backend=cpu --quiet --no_table --batch=1,3 --heads=2 --kv_heads=1 --seq_len=9,37 --pages=1,2 --q_len=1
      --head_dim=8 --causal=true --dtype=bf16 --strategies=fused,head_batched --warmup=0)
grid+=(--batch=1 --seq_len=9,21,37,50,64)
slow=(--max_noise=0 --min_samples=1000000 --max_samples=1000000 --max_time=0.1)
"$bin" "${grid[@]}" --min_samples=1 --max_samples=1 --json=whole.json || bad "uninterrupted run"
total=$(rows whole.json | wc -l)
[[ $total -eq 20 ]] && ok || bad "whole run has $total rows, wanted 20"

for sig in TERM INT; do
  rm -f r.json r.json.journal
  "$bin" "${grid[@]}" "${slow[@]}" --json=r.json &
  pid=$!
  wait_for_entries r.json.journal 2 || bad "SIG$sig: the journal did not grow"
  kill -$sig $pid
  wait $pid
  rc=$?
  want=$([[ $sig == TERM ]] && echo 143 || echo 130)
  [[ $rc -eq $want ]] && ok || bad "SIG$sig: exit $rc, wanted $want"
  python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(d.get("interrupted")!=sys.argv[1] or not any("interrupted by" in w for w in d["warnings"]))' "SIG$sig" &&
    ok || bad "SIG$sig: the report is not marked interrupted"
  done_rows=$(rows r.json | wc -l)
  [[ $done_rows -ge 4 && $done_rows -lt $total && $((done_rows % 2)) -eq 0 ]] && ok || bad "SIG$sig: $done_rows rows (whole problems only)"
  [[ $(entries r.json.journal) -eq $((done_rows / 2)) ]] && ok || bad "SIG$sig: journal and report disagree"
  [[ -z $(comm -23 <(rows r.json) <(rows whole.json)) ]] && ok || bad "SIG$sig: rows not of the grid"
  "$bin" "${grid[@]}" "${slow[@]}" --json=r.json --resume 2>stderr.txt || bad "SIG$sig: --resume failed"
  grep -q "resuming from 'r.json.journal': $((done_rows / 2)) problem(s) already done" stderr.txt && ok || bad "SIG$sig: resume note: $(cat stderr.txt)"
  diff <(rows --ordered whole.json) <(rows --ordered r.json) >/dev/null && ok || bad "SIG$sig: resumed rows differ from the uninterrupted run's"
  python3 -c 'import json,sys; sys.exit("interrupted" in json.load(open("r.json")))' && ok || bad "SIG$sig: the finished report is still marked interrupted"
done

# SIGKILL: no report, but the journal holds what finished, and --resume completes the grid.
rm -f k.json k.json.journal
"$bin" "${grid[@]}" "${slow[@]}" --json=k.json &
pid=$!
wait_for_entries k.json.journal 3 || bad "SIGKILL: the journal did not grow"
kill -KILL $pid
wait $pid 2>/dev/null
held=$(entries k.json.journal)
[[ ! -e k.json && $held -ge 3 ]] && ok || bad "SIGKILL: report $(ls k.json 2>&1), journal $held entries"
printf '{"problem": 9, "rows": [{"tor' >>k.json.journal  # a line cut short by the kill
"$bin" "${grid[@]}" "${slow[@]}" --json=k.json --resume 2>stderr.txt || bad "SIGKILL: --resume failed"
grep -q "$held problem(s) already done (a torn last line was dropped)" stderr.txt && ok || bad "SIGKILL: resume note: $(cat stderr.txt)"
diff <(rows --ordered whole.json) <(rows --ordered k.json) >/dev/null && ok || bad "SIGKILL: resumed rows differ"
# Resuming a finished run redoes nothing and rewrites the same rows.
"$bin" "${grid[@]}" "${slow[@]}" --json=k.json --resume 2>stderr.txt && grep -q "10 problem(s) already done" stderr.txt &&
  diff <(rows --ordered whole.json) <(rows --ordered k.json) >/dev/null && ok || bad "resuming a finished run"

# A shard is interrupted and resumed like a whole run.
"$bin" "${grid[@]}" --shard=1/2 --min_samples=1 --max_samples=1 --json=sh.json || bad "shard 1/2"
"$bin" "${grid[@]}" --shard=1/2 --min_samples=1 --max_samples=1 --json=sh.json --resume 2>/dev/null &&
  diff <(rows --ordered sh.json) <(rows --ordered whole.json | grep -F -f <(rows sh.json)) >/dev/null && ok || bad "shard resume"

# Journals that do not belong to the run: one line, exit 2.
expect_exit 2 "belongs to another run: its settings differs" "$bin" "${grid[@]}" "${slow[@]}" --seed=9 --json=k.json --resume
expect_exit 2 "belongs to another run: its shard differs (was 0/1, now 1/2)" "$bin" "${grid[@]}" "${slow[@]}" --shard=1/2 --json=k.json --resume
expect_exit 2 "belongs to another run: its grid differs" "$bin" "${grid[@]}" "${slow[@]}" --seq_len=9 --json=k.json --resume
python3 -c '
import json; lines=open("k.json.journal").read().splitlines(); h=json.loads(lines[0]); h["tool"]["version"]="0.0.1"
open("old.json.journal","w").write("\n".join([json.dumps(h)]+lines[1:])+"\n")'
expect_exit 2 "belongs to another run: its tool differs" "$bin" "${grid[@]}" "${slow[@]}" --json=old.json --resume
expect_exit 2 "not an attnbench journal" sh -c "echo '{}' >bad.json.journal; exec \"$bin\" ${grid[*]} --json=bad.json --resume"
expect_exit 2 "--resume: needs --json" "$bin" "${grid[@]}" --resume

# tune: SIGTERM keeps the cache of what finished; --resume finishes it with every entry of an uninterrupted tune.
tgrid=(--backend=cpu --quiet --batch=1 --heads=2 --seq_len=9,21,37,50,64,80 --head_dim=8 --strategies=fused,head_batched
       --warmup=0)
tslow=(--max_noise=0 --min_samples=1000000 --max_time=0.1)
keys() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sorted(e["key"] for e in d.get("gemm",[])+d.get("fused",[])))' "$1"; }
"$bin" tune "${tgrid[@]}" --min_samples=1 --cache=tune_whole.json >/dev/null || bad "tune"
"$bin" tune "${tgrid[@]}" "${tslow[@]}" --cache=t.json >/dev/null 2>tune_err.txt &
pid=$!
wait_for_entries t.json.journal 2 || bad "tune: the journal did not grow"
kill -TERM $pid
wait $pid
rc=$?
[[ $rc -eq 143 ]] && grep -q "interrupted by SIGTERM" tune_err.txt && ok || bad "tune SIGTERM: exit $rc: $(cat tune_err.txt)"
python3 -c 'import json,sys; d=json.load(open("t.json")); sys.exit(len(d.get("fused",[]))<2)' && ok || bad "tune: the cache lost what finished"
expect_exit 2 "its command differs (was tune, now run)" sh -c "cp t.json.journal x.json.journal; exec \"$bin\" ${grid[*]} --json=x.json --resume"
"$bin" tune "${tgrid[@]}" "${tslow[@]}" --cache=t.json --resume >/dev/null 2>stderr.txt || bad "tune --resume failed: $(cat stderr.txt)"
grep -q "problem(s) already done" stderr.txt && ok || bad "tune --resume did not resume"
[[ "$(keys t.json)" == "$(keys tune_whole.json)" ]] && ok || bad "tune: resumed cache keys differ"
finish
