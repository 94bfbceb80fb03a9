#!/usr/bin/env bash
# Issue 50 through the real binary (CPU backend): the surfaces added after the first reliability pass. Journals
# (deep, huge, planted links, read-only, edited, cut, duplicated, of another grid, two runs at once), --resume,
# merge of shards of another grid or with impossible headers, an output that is an input, a failing standard
# output, FIFOs and devices as inputs, length files and messages without bounds, temporary files of a killed
# write, suites with repeated grids or unknown keys, and signals at a run's first and last moments. Each case
# failed before the fix (docs/reliability.md's table).
# Usage: cli_reliability_surfaces.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
for tool in python3 timeout mkfifo md5sum; do
  command -v $tool >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 77; }
done
source "$src/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
A=("$bin" --backend=cpu -q --batch=1 --heads=2 --seq_len=64 --head_dim=32 --strategies=fused --max_time=0.02)
K=("$bin" --backend=cpu -q --batch=1 --heads=2 --head_dim=32 --strategies=fused --max_time=0.02)  # --kv_lens gives S
G=("$bin" --backend=cpu -q --no_table --batch=1 --heads=2 --head_dim=16 --strategies=fused,head_batched
   --min_samples=1 --max_samples=1 --warmup=0)
rows() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$1"; }
valid_report() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d.get("schema")!="attnbench.report/1")' "$1"; }
lines_of() { grep -c '' "$1"; }
mkdir -p d

# 1. A deeply nested journal line is dropped with a note (its problem runs again); a deep header is refused.
"${G[@]}" --seq_len=9,21 --json=deep.json || bad "deep: first run"
cp deep.json.journal deep.orig
for variant in arrays objects inrows; do
  cp deep.orig deep.json.journal
  python3 - "$variant" >>deep.json.journal <<'PY'
import sys
v, n = sys.argv[1], 100000
if v == "arrays": print("[" * n + "]" * n)
elif v == "objects": print('{"a":' * n + "1" + "}" * n)
else: print('{"problem": 0, "rows": [' + "[" * n + "]" * n + "]}")
PY
  "${G[@]}" --seq_len=9,21 --json=deep.json --resume 2>err.txt
  rc=$?
  [[ $rc -eq 0 ]] && grep -q "nested more than 64 levels deep" err.txt && [[ $(rows deep.json) -eq 4 ]] && ok ||
    bad "deep journal line ($variant): exit $rc: $(head -c 300 err.txt)"
done
{ python3 -c 'print("[" * 100000 + "]" * 100000)'; tail -n +2 deep.orig; } >deep.json.journal
expect_exit 2 "not an attnbench journal" "${G[@]}" --seq_len=9,21 --json=deep.json --resume
# An 88 MB journal under memory limits: a clean result or one line and exit 3, never a signal.
if [[ -z ${ASAN_OPTIONS:-} && -z ${UBSAN_OPTIONS:-} ]]; then
  { head -1 deep.orig; python3 -c '
import sys
line = "{\"problem\": 1, \"rows\": [" + ",".join(["1.5"] * 200000) + "]}\n"
for _ in range(110): sys.stdout.write(line)'; } >big.json.journal
  cp big.json.journal big.orig
  for limit in 100000 400000; do  # KiB of address space: the first runs out (it aborted before), the second not
    # A CUDA build maps its libraries' gigabyte before main(): there the limit says nothing of attnbench's handling.
    (ulimit -v $limit; exec "$bin" --version) >/dev/null 2>&1 || { echo "note: $limit KiB is too little to start this binary"; continue; }
    cp big.orig big.json.journal
    (ulimit -v $limit; exec "${G[@]}" --seq_len=9,21 --json=big.json --resume) >/dev/null 2>err.txt
    rc=$?
    if [[ $rc -eq 0 ]] || { [[ $rc -eq 3 && $(lines_of err.txt) -eq 1 ]] && grep -q "out of host memory" err.txt; }; then ok
    else bad "an 88 MB journal under a $limit KiB limit: exit $rc: $(head -c 300 err.txt)"; fi
  done
fi

# 2. A planted link at the journal's path is refused, the file it points to untouched; so is a read-only journal.
echo precious >victim
ln -s "$PWD/victim" d/r.json.journal
expect_exit 2 "symbolic link" "${A[@]}" --json=d/r.json
[[ $(cat victim) == precious && ! -e d/r.json ]] && ok || bad "planted link: victim $(head -c 100 victim)"
expect_exit 2 "symbolic link" "${A[@]}" --json=d/r.json --resume
rm d/r.json.journal
"${A[@]}" --json=d/ro.json || bad "read-only: first run"
chmod 444 d/ro.json.journal
before=$(md5sum <d/ro.json.journal)
expect_exit 2 "read-only" "${A[@]}" --json=d/ro.json
[[ $(md5sum <d/ro.json.journal) == "$before" ]] && ok || bad "a read-only journal was rewritten"
echo "mine, not a journal" >d/mine.json.journal
expect_exit 2 "not an attnbench journal" "${A[@]}" --json=d/mine.json
grep -q "mine, not a journal" d/mine.json.journal && ok || bad "a file that is not a journal was replaced"

# 3. An output that is an input (or another output) is refused before any work; the cache is untouched.
"$bin" tune --backend=cpu -q --batch=1 --heads=2 --seq_len=64 --head_dim=32 --strategies=fused --max_time=0.02 \
  --cache=c.json >/dev/null || bad "tune for the cache"
before=$(md5sum <c.json)
expect_exit 2 "--json 'c.json' is also --cache" "${A[@]}" --cache=c.json --json=c.json
expect_exit 2 "is also --cache" "${A[@]}" --cache=c.json --md=./c.json
expect_exit 2 "both write 'o.json'" "${A[@]}" --json=o.json --csv=o.json
expect_exit 2 "two outputs cannot share one file" "${A[@]}" --json=o.json --csv=./o.json
expect_exit 2 "--cache 'c.json' is also --json" "$bin" tune --backend=cpu -q --batch=1 --heads=2 --seq_len=64 \
  --head_dim=32 --strategies=fused --cache=c.json --json=c.json
[[ $(md5sum <c.json) == "$before" ]] && ok || bad "the cache was replaced"
printf '{"grids": [{"batch": 1, "heads": 2, "seq_len": 64, "head_dim": 32}]}' >suite.json
expect_exit 2 "is also the suite file of --config" "$bin" --backend=cpu -q --config=suite.json --json=suite.json
printf '5\n9\n' >lens.txt
printf '{"grids": [{"batch": 2, "heads": 2, "head_dim": 16, "q_len": 1, "kv_lens": "file:lens.txt"}]}' >ragged.json
expect_exit 2 "is also a lengths file (--kv_lens)" "$bin" --backend=cpu -q --config=ragged.json --md=lens.txt
expect_exit 2 "is also a lengths file (--kv_lens)" "${K[@]}" --batch=2 --q_len=1 --kv_lens=file:lens.txt --csv=./lens.txt
[[ $(cat lens.txt) == $'5\n9' ]] && ok || bad "the lengths file was replaced"

# 4. A failing standard output is one line and a non-zero exit; the journal never receives the table.
expect_exit 2 "cannot write to standard output" sh -c 'exec "$@" --json=- >/dev/full' _ "${A[@]}"
expect_exit 2 "standard output is closed" sh -c 'exec "$@" --json=- >&-' _ "${A[@]}"
expect_exit 2 "cannot write to standard output" sh -c 'exec "$@" >/dev/full' _ "${A[@]}"
expect_exit 2 "standard output is closed" sh -c 'exec "$@" --json=closed.json >&-' _ "${A[@]}"
expect_exit 2 "cannot write" sh -c 'exec "$@" --json=/dev/stdout >&-' _ "${A[@]}"
{ "${A[@]}" --json=- 2>pipe_err.txt; echo $? >pipe_rc.txt; } | head -c 0
[[ $(cat pipe_rc.txt) -eq 2 && $(lines_of pipe_err.txt) -eq 1 ]] && grep -q "Broken pipe" pipe_err.txt && ok ||
  bad "a reader gone: exit $(cat pipe_rc.txt): $(head -c 300 pipe_err.txt)"
valid_report closed.json && python3 -c '
import json,sys
for l in open("closed.json.journal"): json.loads(l)' && ok || bad "closed stdout: report or journal damaged"

# 5. merge refuses shards of two grids of one size, and shard headers that cannot be.
"${G[@]}" --seq_len=32,64,128,256 --shard=0/2 --json=s0.json || bad "shard 0"
"${G[@]}" --seq_len=32,64,200,256 --shard=1/2 --json=s1.json || bad "shard 1"
"${G[@]}" --seq_len=32,64,128,256 --shard=1/2 --json=s1ok.json || bad "shard 1 of the first grid"
"$bin" merge -q m.json s0.json s1ok.json && ok || bad "merge of the right shards"
expect_exit 2 "another grid of that size" "$bin" merge m2.json s0.json s1.json
python3 -c '
import json
d = json.load(open("s0.json")); d["shard"]["index"] = 5; json.dump(d, open("s5.json", "w"))
d = json.load(open("s0.json")); d["shard"]["problems"] = d["shard"]["problems"] + [99]; json.dump(d, open("s99.json", "w"))
d = json.load(open("s0.json")); n = len(d["shard"]["problems"])
d["shard"]["problems"] = json.load(open("s1ok.json"))["shard"]["problems"][:n]; json.dump(d, open("swrong.json", "w"))'
expect_exit 2 "shard 5 of 2" "$bin" merge m3.json s5.json s1ok.json
expect_exit 2 "increasing grid indices below its grid size 4" "$bin" merge m4.json s99.json s1ok.json
expect_exit 2 "both ran problem" "$bin" merge m5.json swrong.json s1ok.json
[[ ! -e m2.json && ! -e m3.json && ! -e m4.json && ! -e m5.json ]] && ok || bad "a refused merge wrote its output"

# 6. --resume checks every line: edited, deleted, duplicated and unknown rows are dropped and run again, so the
# report holds exactly the grid's rows, none of them the edited values; an empty or torn journal starts afresh.
"${G[@]}" --seq_len=9,21,37 --json=j.json || bad "journal: first run"
cp j.json.journal j.orig
for edit in median delete duplicate strategy; do
  python3 - "$edit" <<'PY'
import json, sys
lines = open("j.orig").read().splitlines()
e = json.loads(lines[2])
rows = e["rows"]
if sys.argv[1] == "median": rows[0]["time_ms"]["median"] = 123456.0
elif sys.argv[1] == "delete": del rows[1]
elif sys.argv[1] == "duplicate": rows.append(rows[0])
else: rows[1]["strategy"] = "bogus"
lines[2] = json.dumps(e)
open("j.json.journal", "w").write("\n".join(lines) + "\n")
PY
  "${G[@]}" --seq_len=9,21,37 --json=j.json --resume 2>err.txt
  rc=$?
  [[ $rc -eq 0 ]] && grep -q "line 3 of 'j.json.journal' dropped\|1 line(s) of 'j.json.journal' dropped" err.txt &&
    [[ $(rows j.json) -eq 6 ]] && ! grep -q 123456 j.json && ! grep -q bogus j.json &&
    python3 -c 'import json,sys; j=json.load(open("j.json"))["journal"]; sys.exit(not (j["complete"] and j["dropped_lines"]==1))' &&
    ok || bad "edited journal ($edit): exit $rc, $(rows j.json) rows: $(head -c 300 err.txt)"
done
: >j.json.journal
"${G[@]}" --seq_len=9,21,37 --json=j.json --resume 2>err.txt && grep -q "no whole header line" err.txt &&
  [[ $(rows j.json) -eq 6 ]] && ok || bad "an empty journal blocks --resume: $(head -c 300 err.txt)"
printf '{"command": "ru' >j.json.journal
"${G[@]}" --seq_len=9,21,37 --json=j.json --resume 2>err.txt && grep -q "no whole header line" err.txt &&
  [[ $(rows j.json) -eq 6 ]] && ok || bad "a torn header blocks --resume: $(head -c 300 err.txt)"

# 7. Two runs writing one report at once: the second is refused at its start (here the journal's lock is held by
# another process, deterministically), and with a real first run, that one finishes whole.
"${G[@]}" --seq_len=9,21 --json=held.json || bad "held: first run"
python3 -c 'import fcntl, time; f = open("held.json.journal"); fcntl.flock(f, fcntl.LOCK_EX); open("locked", "w").close(); time.sleep(60)' &
holder=$!
for _ in $(seq 200); do [[ -e locked ]] && break; sleep 0.05; done
expect_exit 2 "another attnbench process is writing it" "${G[@]}" --seq_len=9,21,37 --json=held.json
expect_exit 2 "another attnbench process is writing it" "${G[@]}" --seq_len=9,21 --json=held.json --resume
kill $holder; wait $holder 2>/dev/null
slow=(--max_noise=0 --min_samples=1000000 --max_samples=1000000 --max_time=0.5)
"${G[@]}" --seq_len=9,21,37,50 "${slow[@]}" --json=two.json &
pid=$!
for _ in $(seq 300); do [[ -s two.json.journal ]] && break; sleep 0.05; done
expect_exit 2 "another attnbench process is writing it" "${G[@]}" --seq_len=9,21 --json=two.json
wait $pid && [[ $(rows two.json) -eq 8 ]] && ok || bad "the first of two runs did not finish whole"

# 9. A FIFO with no writer, a device or a directory as an input: one line, exit 2, at once (no hang).
mkfifo fifo
expect_exit 2 "a FIFO or pipe, not a regular file" timeout 20 "${K[@]}" --kv_lens=file:fifo
expect_exit 2 "a FIFO or pipe, not a regular file" timeout 20 "$bin" --backend=cpu -q --config="$PWD/fifo"
mkfifo d/f.json.journal
expect_exit 2 "a FIFO or pipe" timeout 20 "${A[@]}" --json=d/f.json --resume
expect_exit 2 "not a regular file" timeout 20 "${A[@]}" --json=d/f.json
expect_exit 2 "a FIFO or pipe, not a regular file" timeout 20 "$bin" report fifo
expect_exit 2 "is a directory" "${K[@]}" --kv_lens=file:d
expect_exit 2 "--plugin 'fifo': a FIFO or pipe, not a regular file" timeout 20 "${A[@]}" --plugin=fifo
expect_exit 2 "--plugin 'fifo': a FIFO or pipe, not a regular file" timeout 20 "$bin" list --plugin=fifo
# A stream the user names explicitly is still read.
"$bin" report /dev/stdin <c.json >/dev/null 2>&1; [[ $? -eq 2 ]] && ok || bad "report /dev/stdin"  # a cache, not a report: read, then refused
"$bin" report /dev/stdin <closed.json >/dev/null && ok || bad "a report on /dev/stdin is not read"

# 10. Length files and messages are bounded: a device, a 15 MB line, binary garbage, a file over 16 MiB, a value
# with a newline.
expect_exit 2 "a character device, not a regular file" "${K[@]}" --kv_lens=file:/dev/zero
expect_exit 2 "a character device" "${K[@]}" --kv_lens=file:/dev/urandom
python3 -c 'open("long.txt","w").write("7" * 15000000 + "x\n")'
expect_exit 2 "is not a whole number" "${K[@]}" --kv_lens=file:long.txt
[[ $(wc -c <stderr.txt) -lt 1000 ]] && ok || bad "a 15 MB line gave a $(wc -c <stderr.txt)-byte error"
head -c 3000 /dev/urandom | tr -d '\n' >garbage.txt; printf '\n\x01\x02\xff\n' >>garbage.txt
expect_exit 2 "--kv_lens" "${K[@]}" --kv_lens=file:garbage.txt
[[ $(wc -c <stderr.txt) -lt 1000 ]] && ! grep -qP '[\x00-\x08\x0b-\x1f]' stderr.txt && ok || bad "garbage in the error line"
python3 -c 'open("huge.txt","w").write("1\n" * 9000000)'
expect_exit 2 "larger than 16 MiB" "${K[@]}" --kv_lens=file:huge.txt
expect_exit 2 "--shard: '0/2\n' is not" "${A[@]}" --shard=$'0/2\n'

# 11. A temporary file that a killed writer left is removed by the next write; a killed write leaves none.
sleep 0 & dead=$!
wait $dead
host=$(hostname); host=${host//./-}
echo junk >"t.json.tmp.$host.$dead.abcdef"
echo other >"t.json.tmp.$host.$$.abcdef"   # a live writer's (this shell): kept
"${A[@]}" --json=t.json || bad "write beside a stale temporary file"
[[ ! -e "t.json.tmp.$host.$dead.abcdef" && -e "t.json.tmp.$host.$$.abcdef" ]] && ok || bad "stale temporary files: $(ls t.json.tmp.* 2>&1)"
rm -f t.json.tmp.*
"${G[@]}" --seq_len=8:400:+8 --json=k.json >/dev/null || bad "kill: first run"
for trial in 1 2 3 4 5 6 7 8; do
  "${G[@]}" --seq_len=8:400:+8 --json=k.json --resume 2>/dev/null &
  pid=$!
  sleep "0.0$((trial * 9))"
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
done
# What a kill left (nothing where the file system has O_TMPFILE) is gone after the next whole write.
"${G[@]}" --seq_len=8:400:+8 --json=k.json --resume 2>/dev/null || bad "kill: the write after the kills"
[[ -z $(ls k.json.tmp.* k.json.journal.tmp.* 2>/dev/null) ]] && valid_report k.json && ok || bad "killed writes left $(ls k.json.tmp.* 2>&1)"

# 12. Suites: the same problem in two grids, an unknown top-level key; signals at the first moment.
printf '{"grids": [{"batch": 1, "seq_len": 64}, {"batch": 1, "seq_len": 64}]}' >twice.json
expect_exit 2 "grids 1 and 2 both hold" "$bin" grid --config="$PWD/twice.json"
printf '{"grid": [{"batch": 1}], "grids": [{"batch": 1}]}' >typo.json
expect_exit 2 "unknown top-level key 'grid'" "$bin" grid --config="$PWD/typo.json"
# Without ATTNBENCH_HOST_COPY_GBPS the CPU backend measures its copy bandwidth first (about half a second).
# signal_early PID: SIGTERM as soon as PID catches it (/proc's SigCgt), or at 0.3 s if it does not by then (the
# code before took the signal only after the backend was up: the default action killed it, leaving nothing).
signal_early() {
  for _ in $(seq 30); do
    cgt=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    [[ -n $cgt ]] && (( (16#$cgt >> 14) & 1 )) && break
    sleep 0.01
  done
  kill -TERM "$1"
}
env -u ATTNBENCH_HOST_COPY_GBPS "${G[@]}" --seq_len=9,21,37,50 "${slow[@]}" --json=early.json &
pid=$!
signal_early $pid
wait $pid
rc=$?
[[ $rc -eq 143 ]] && valid_report early.json &&
  python3 -c 'import json,sys; sys.exit(json.load(open("early.json")).get("interrupted") != "SIGTERM")' && ok ||
  bad "SIGTERM in the first moments: exit $rc, report $(ls early.json 2>&1)"
# A signal once every problem is finished (here: all in the journal) interrupts nothing: a complete report, exit 0.
"${G[@]}" --seq_len=9,21 --json=late.json || bad "late: first run"
env -u ATTNBENCH_HOST_COPY_GBPS "${G[@]}" --seq_len=9,21 --json=late.json --resume 2>err.txt &
pid=$!
signal_early $pid
wait $pid
rc=$?
[[ $rc -eq 0 && $(rows late.json) -eq 4 ]] && grep -q "came after the last problem finished" err.txt &&
  python3 -c 'import json,sys; sys.exit("interrupted" in json.load(open("late.json")))' && ok ||
  bad "SIGTERM after the last problem: exit $rc: $(head -c 300 err.txt)"
finish
