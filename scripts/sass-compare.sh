#!/usr/bin/env bash
# Compares the SASS of every kernel instance of two builds (issue 44: a kernel refactor must not change a kernel's
# code): one line per kernel instance, identical / differs (instruction-count delta) / only in one build.
# This script finds cuobjdump (CUOBJDUMP, PATH, CUDA_HOME or /usr/local/cuda, then scripts/fetch-cuobjdump.sh's
# cache, fetched there when SASS_FETCH=1) and hands it to scripts/sass_compare.py, which does the comparing.
#   scripts/sass-compare.sh [options] BEFORE AFTER
#     BEFORE, AFTER: build folders (every *.o under them with device code, matched by relative path), or two
#     files (object, archive, executable, shared library). Options (sass_compare.py --help): --filter RE (object
#     paths), --kernel RE (mangled names), --diff N (show N lines of each difference), --text-only, --demangle,
#     --quiet (only what is not identical).
#   e.g. scripts/sass-compare.sh --filter attnbench_kernels /work/sass-before /work/sass-after
#   Exit: 0 every instance identical; 1 some differ or are in one build only; 2 bad input; 77 no cuobjdump.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${ATTNBENCH_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/attnbench/tools}

find_cuobjdump() {
  local c
  for c in "${CUOBJDUMP:-}" "$(command -v cuobjdump 2>/dev/null)" "${CUDA_HOME:+$CUDA_HOME/bin/cuobjdump}" \
           /usr/local/cuda/bin/cuobjdump; do
    [[ -n $c && -x $c ]] && { echo "$c"; return 0; }
  done
  # shellcheck disable=SC2012
  c=$(ls -d "$cache"/cuobjdump-*/cuobjdump 2>/dev/null | sort -V | tail -1)
  [[ -n $c && -x $c ]] && { echo "$c"; return 0; }
  return 1
}

cuobjdump=$(find_cuobjdump)
if [[ -z $cuobjdump && ${SASS_FETCH:-0} == 1 ]]; then
  "$here/fetch-cuobjdump.sh" >/dev/null && cuobjdump=$(find_cuobjdump)
fi
if [[ -z $cuobjdump ]]; then
  echo "sass-compare: SKIPPED: no cuobjdump (run scripts/fetch-cuobjdump.sh, or set CUOBJDUMP)" >&2
  exit 77
fi
command -v python3 >/dev/null || { echo "sass-compare: SKIPPED: no python3" >&2; exit 77; }
exec python3 "$here/sass_compare.py" --cuobjdump "$cuobjdump" "$@"
