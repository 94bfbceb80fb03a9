#!/usr/bin/env bash
# Real Slurm (issue 17, point 5): starts a one-node cluster in a temporary folder (munged, slurmctld and slurmd
# with a minimal slurm.conf on private ports), submits scripts/slurm/submit.sh's 4-task array of the CPU
# backend over a small grid and its dependent merge job, waits, checks that the merged report has exactly the
# rows of an unsharded run, and shuts the cluster down. Exits 77 (skipped) when not root or when Slurm or
# munge is missing (Debian: slurm-wlm munge). Usage: slurm_array.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
src=$2
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to start slurmctld, slurmd and munged"
for t in munged slurmctld slurmd sbatch squeue scontrol; do command -v $t >/dev/null || skip "$t not installed (apt-get install slurm-wlm munge)"; done
d=$(mktemp -d /tmp/attnbench-slurm-XXXXXX)
chmod 755 "$d"
munge_pid=""
cleanup() {
  SLURM_CONF=$d/slurm.conf scontrol shutdown >/dev/null 2>&1
  for f in "$d"/slurmd.pid "$d"/slurmctld.pid; do [[ -s $f ]] && kill "$(cat "$f")" 2>/dev/null; done
  [[ -s $d/munged.pid ]] && kill "$(cat "$d/munged.pid")" 2>/dev/null
  sleep 0.5
  rm -rf "$d"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for l in "$d"/*.log "$d"/out/*.out; do [[ -f $l ]] && { echo "== $l"; tail -20 "$l"; }; done; exit 1; }

# munge: a fresh key and a private socket.
mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/out"
dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$d/munge"; chmod 400 "$d/munge/munge.key"
munged --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.sock" --pid-file="$d/munged.pid" \
  --log-file="$d/munged.log" --seed-file="$d/munge/munge.seed" || fail "munged did not start"

host=$(hostname -s)
cpus=$(nproc)
port=$((20000 + RANDOM % 20000))
cat >"$d/slurm.conf" <<CONF
ClusterName=attnbench-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdTimeout=30
MinJobAge=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$d/slurm.conf
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 0.2
done
sinfo -h -o %t | grep -qE '^(idle|mix|alloc)' || fail "the node did not come up: $(sinfo 2>&1)"

# The grid: 8 problems with a short last page, B=1, one KV head, q_len=1, causal, both dtypes.
args="--backend=cpu --quiet --no_table --batch=1,2 --heads=2 --kv_heads=1 --seq_len=13,40 --pages=3 --q_len=1 --head_dim=8"
args+=" --causal=true --dtype=fp16,bf16 --strategies=fused,head_batched,nested --warmup=0 --min_samples=1 --max_samples=1"
# shellcheck disable=SC2086
"$bin" $args --json="$d/whole.json" || fail "unsharded run"
cd "$d/out"
ids=$(ATTNBENCH=$bin ATTNBENCH_ARGS=$args ATTNBENCH_OUT=$d/res "$src/scripts/slurm/submit.sh" run 4 --cpus-per-task=1) ||
  fail "submit.sh: $ids"
merge_id=$(echo "$ids" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')
[[ -n $merge_id ]] || fail "no merge job id in '$ids'"
for _ in $(seq 200); do
  squeue -h -j "$merge_id" 2>/dev/null | grep -q . || break
  sleep 0.2
done
[[ -f $d/res/merged.json ]] || fail "no merged report ($(squeue 2>&1))"
n=$(ls "$d"/res/shard-*.json | wc -l)
[[ $n -eq 4 ]] || fail "$n shard reports, wanted 4"
rows() { python3 "$src/tests/cpu/rows_of.py" "$@"; }
diff <(rows --ordered "$d/whole.json") <(rows --ordered "$d/res/merged.json") || fail "merged rows differ from the unsharded run's"
for i in 0 1 2 3; do
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["shard"]; sys.exit(s["index"]!=int(sys.argv[2]) or s["count"]!=4)' \
    "$d/res/shard-$i.json" $i || fail "shard-$i.json does not record shard $i/4"
done
echo "PASS: a 4-task Slurm array and its dependent merge gave the $(rows "$d/whole.json" | wc -l) rows of the unsharded run"
