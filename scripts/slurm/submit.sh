#!/usr/bin/env bash
# Submits a sharded attnbench run (or tune) as a Slurm job array of SHARDS tasks and the merge job that runs
# when every task succeeded; prints the two job ids. Usage:
#   ATTNBENCH_ARGS="--config=llama3.1-8b-decode" scripts/slurm/submit.sh run 8 [extra sbatch flags...]
#   ATTNBENCH_ARGS="--config=ci --search=exhaustive" scripts/slurm/submit.sh tune 4 --gres=gpu:1
# The environment (ATTNBENCH, ATTNBENCH_ARGS, ATTNBENCH_OUT) goes to the jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kind=${1:?usage: submit.sh run|tune SHARDS [sbatch flags...]}
shards=${2:?usage: submit.sh run|tune SHARDS [sbatch flags...]}
shift 2
case $kind in
  run) script=$here/run-array.sbatch; merge=report ;;
  tune) script=$here/tune-array.sbatch; merge=cache ;;
  *) echo "submit.sh: the first argument is run or tune, not '$kind'" >&2; exit 2 ;;
esac
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: SHARDS must be a positive integer, not '$shards'" >&2; exit 2; }
array=$(sbatch --parsable --export=ALL --array=0-$((shards - 1)) "$@" "$script")
array=${array%%;*}
merged=$(ATTNBENCH_MERGE=$merge sbatch --parsable --export=ALL --dependency=afterok:"$array" "$here/merge.sbatch")
echo "array job $array, merge job ${merged%%;*}"
