#!/usr/bin/env bash
# Concurrent `tune` runs into one cache merge instead of losing entries (issue 16, finding 5): each trial
# starts from a ~1 MB cache and runs six CPU tunes of different small problems at once into it; every entry
# each tune found alone (and every entry already there) must be in the cache afterwards.
# Usage: cli_concurrent_tune.sh ATTNBENCH SOURCE_DIR [TRIALS]
set -u
bin=$1
trials=${3:-3}
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
tune=(tune --backend=cpu --quiet --batch=1 --heads=1 --head_dim=8 --strategies=fused,head_batched --warmup=0 --min_samples=1 --max_time=0.05)
lens=(16 24 32 40 48 56)

# What each tune finds alone, and a big starting cache (the real entries repeated under padded keys).
for s in "${lens[@]}"; do "$bin" "${tune[@]}" --seq_len=$s --cache=alone_$s.json >/dev/null 2>&1 || bad "tune S=$s alone"; done
python3 - alone_16.json seed.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for kind in ("gemm", "fused"):
    d[kind] = d[kind] + [dict(e, key="%s-pad%d" % (e["key"], i)) for e in d[kind] for i in range(400)]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
keys() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('\n'.join(sorted(k+' '+e['env']+' '+e['key'] for k in ('gemm','fused') for e in d[k])))" "$1"; }
{ for s in "${lens[@]}"; do keys alone_$s.json; done; keys seed.json; } | sort -u >expected.txt
echo "expected $(wc -l <expected.txt) entries, seed cache $(stat -c %s seed.json) bytes"

lost_total=0
for t in $(seq 1 "$trials"); do
  cp seed.json shared.json
  pids=()
  for s in "${lens[@]}"; do
    "$bin" "${tune[@]}" --seq_len=$s --cache=shared.json >out_$s.txt 2>&1 &
    pids+=($!)
  done
  rcs=0
  for p in "${pids[@]}"; do wait "$p" || rcs=$((rcs + 1)); done
  keys shared.json >got.txt
  lost=$(comm -23 expected.txt got.txt | wc -l)
  lost_total=$((lost_total + lost))
  echo "trial $t: $rcs tune(s) failed, $lost of $(wc -l <expected.txt) entries lost"
  [[ $rcs -eq 0 && $lost -eq 0 ]] && ok || bad "trial $t lost $lost entries ($rcs tunes failed)"
done
echo "concurrent tunes: $trials trials x ${#lens[@]} processes, $lost_total entries lost"
finish
