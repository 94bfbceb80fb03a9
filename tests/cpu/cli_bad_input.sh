#!/usr/bin/env bash
# Every bad input through the real binary: a one-line error naming the problem, a non-zero exit that is not
# a crash, and no report file left behind. Usage: cli_bad_input.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0
fail=0

# expect_error NEEDLE ARGS... : exit in 1..127, stderr is exactly one line containing NEEDLE, no out.json.
expect_error() {
  local needle=$1
  shift
  rm -f out.json
  "$bin" --backend=cpu --quiet --json=out.json "$@" >stdout.txt 2>stderr.txt
  local rc=$?
  local lines
  lines=$(grep -c . stderr.txt)
  if [[ $rc -ge 1 && $rc -lt 128 && $lines -eq 1 ]] && grep -q -- "$needle" stderr.txt && [[ ! -e out.json ]] &&
     [[ -z $(ls out.json.tmp.* 2>/dev/null) ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $* (rc=$rc, stderr lines=$lines, wanted '$needle')"
    cat stderr.txt
  fi
}

small=(--batch=1 --heads=1 --seq_len=16 --head_dim=8)
expect_error "batch" --batch=0
expect_error "heads" --heads=-3
expect_error "seq_len" --seq_len=abc
expect_error "head_dim" --head_dim=12x
expect_error "seq_len" --seq_len=
expect_error "range" --seq_len=512:128
expect_error "step" --seq_len=128:512:/2
expect_error "batch" --batch=1,,2
expect_error "more than seq_len" "${small[@]}" --pages=17
expect_error "page_size" "${small[@]}" --page_size=32
expect_error "unknown strategy" "${small[@]}" --strategies=nested,warp_speed
expect_error "dtype" "${small[@]}" --dtype=fp8
expect_error "layout" "${small[@]}" --kv_layout=ring
expect_error "backend" "${small[@]}" --backend=tpu
expect_error "cannot open" --config=does_not_exist.json
echo '{ "grids": [ {"batch": 1,' >broken.json
expect_error "malformed JSON" --config=broken.json
expect_error "refused before allocating" --batch=64 --heads=64 --seq_len=65536 --head_dim=128
expect_error "refused before allocating" "${small[@]}" --seq_len=65536 --head_dim=64 --max_memory=1MiB
expect_error "max_memory" "${small[@]}" --max_memory=lots
expect_error "timer" "${small[@]}" --timer=sundial
expect_error "tile" "${small[@]}" --tile=big
expect_error "no strategy can run" "${small[@]}" --head_dim=300 --strategies=fused
expect_error "not one of this backend's tiles" "${small[@]}" --strategies=fused --tile=m64n200000000w4s2
# A warp-specialized (Hopper) tile name parses and reaches the backend, which names it in its refusal;
# a mangled suffix is no tile name.
expect_error "tile m128n128w12s2ws is not one of this backend's tiles" "${small[@]}" --strategies=fused --tile=m128n128w12s2ws
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=m128n128w12s2wx
# Its persistent variant ("wsp") likewise; "wspp" is no tile name.
expect_error "tile m128n128w12s2wsp is not one of this backend's tiles" "${small[@]}" --strategies=fused --tile=m128n128w12s2wsp
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=m128n128w12s2wspp
# The TMA decode tiles' names parse the same way (the CPU backend has no decode tiles); malformed ones do not.
expect_error "tile decode-ws-s4 is not one of this backend's tiles" "${small[@]}" --strategies=fused --tile=decode-ws-s4
expect_error "tile decode-ws is not one of this backend's tiles" "${small[@]}" --strategies=fused --tile=decode-ws
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=decode-ws-s0
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=decode-ws4
# Its 128-key and whole-row-box variants too, in FusedTile::name's one spelling.
expect_error "tile decode-ws-n128-rows-s4 is not one of this backend's tiles" "${small[@]}" --strategies=fused --tile=decode-ws-n128-rows-s4
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=decode-ws-n64
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=decode-ws-rows-n128
expect_error "is not a tile name" "${small[@]}" --strategies=fused --tile=decode-ws-n0128

# An unwritable --json path: error before any work, nothing written.
rm -f out.json
"$bin" --backend=cpu --quiet "${small[@]}" --json=/nonexistent-dir/out.json >stdout.txt 2>stderr.txt
rc=$?
if [[ $rc -ge 1 && $rc -lt 128 && $(grep -c . stderr.txt) -eq 1 ]] && grep -q "cannot write" stderr.txt; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: unwritable json (rc=$rc)"; cat stderr.txt
fi

# An unknown flag: CLI11's error in one line.
"$bin" --bogus >stdout.txt 2>stderr.txt
rc=$?
if [[ $rc -eq 2 && $(grep -c . stderr.txt) -eq 1 ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: unknown flag rc=$rc"; cat stderr.txt; fi

# An unsupported head_dim for one strategy: that strategy is unsupported with a reason, the others run.
"$bin" --backend=cpu --quiet "${small[@]}" --head_dim=300 --strategies=fused,head_batched --verify --json=out.json >stdout.txt 2>stderr.txt
rc=$?
if [[ $rc -eq 0 ]] && python3 - out.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
by = {x["strategy"]: x for x in r}
assert by["fused"]["status"] == "unsupported" and "head_dim" in by["fused"]["reason"], by["fused"]
assert by["head_batched"]["status"] == "ok", by["head_batched"]
PY
then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: unsupported head_dim row (rc=$rc)"; cat stderr.txt; fi

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
