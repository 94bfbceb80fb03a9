#!/usr/bin/env bash
# Fetches the in-process peers' headers from PyPI (docs/peers.md): cudnn_frontend's header-only C++ API, the
# cuDNN headers it compiles against, FlashInfer's header-only kernels with the CCCL (libcudacxx) headers they
# need, and the CUTLASS/CuTe headers FlashInfer's Hopper FA3 path includes (only those its kernels read, listed in
# peers/flashinfer/fa3/cutlass_headers.txt). Only headers land in DEST (third_party/peers by default, git ignored,
# under 30 MB: small enough to carry to a GPU machine); the wheels are cached in PEERS_WHEELS. A header set that
# DEST already holds as the wheel has it is left untouched (its files' times too: a build does not recompile).
# libcudnn itself is not fetched: the cuDNN peer loads libcudnn.so.9 at run time (from LD_LIBRARY_PATH, or
# ATTNBENCH_CUDNN_LIB, e.g. PyTorch's nvidia/cudnn/lib). Configure with -DATTNBENCH_PEERS_DIR=DEST.
#   scripts/fetch-peers.sh [DEST]     exit 0: every header set in DEST; 1: a download failed (one line says which)
# PEERS_CUTLASS: list (default): the listed CUTLASS headers; full: FlashInfer's whole CUTLASS include trees
# (29 MB, what scripts/flashinfer-fa3-headers.py makes the list from); none: no CUTLASS (no flashinfer-fa3).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-third_party/peers}
wheels=${PEERS_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/attnbench/wheels}
cutlass_list=peers/flashinfer/fa3/cutlass_headers.txt
# The pinned versions (one place): the frontend and FlashInfer the peers were written against, and the cuDNN
# headers of the libcudnn the GPU image ships (PyTorch 2.11's cuDNN 9.19).
frontend=nvidia-cudnn-frontend==1.32.0
cudnn=nvidia-cudnn-cu13==9.19.0.56
flashinfer=flashinfer-python==0.7.2.post1
mkdir -p "$wheels" "$dest"

fetch() {  # fetch SPEC: the wheel of SPEC in $wheels (downloaded once); prints its path
  local name=${1%%==*} version=${1##*==}
  local glob="$wheels/${name//-/_}-${version}-*.whl"
  # shellcheck disable=SC2086
  if ! compgen -G "$glob" >/dev/null; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "$1" >&2 ||
      { echo "fetch-peers: could not download $1 from PyPI" >&2; return 1; }
  fi
  # shellcheck disable=SC2086
  ls $glob | head -1
}

# unpack WHEEL SUBDIR TARGET [LIST]: SUBDIR of the wheel (only the paths LIST names under it, when given) into
# TARGET, which is replaced whole unless it already holds exactly that.
unpack() {
  local tmp
  tmp=$(mktemp -d)
  python3 - "$1" "$2" "$tmp" "${4:-}" <<'PY'
import sys, zipfile
wheel, sub, out, listed = sys.argv[1:]
wanted = None
if listed:
    with open(listed) as f:
        wanted = {sub + "/" + l.strip() for l in f if l.strip() and not l.startswith("#")}
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(sub + "/") and (wanted is None or n in wanted)]
    if not names:
        sys.exit(f"fetch-peers: {wheel} has no {sub}/")
    if wanted is not None and len(names) != len(wanted):
        missing = sorted(wanted - set(names))
        sys.exit(f"fetch-peers: {wheel} lacks {len(missing)} header(s) of {listed}, e.g. {missing[0]}")
    for n in names:
        z.extract(n, out)
PY
  if [[ -d $3 ]] && diff -rq "$tmp/$2" "$3" >/dev/null 2>&1; then
    rm -rf "$tmp"
    return
  fi
  rm -rf "$3"
  mkdir -p "$(dirname "$3")"
  mv "$tmp/$2" "$3"
  rm -rf "$tmp"
}

w_frontend=$(fetch "$frontend") && w_cudnn=$(fetch "$cudnn") && w_flashinfer=$(fetch "$flashinfer") || exit 1
unpack "$w_frontend" include "$dest/cudnn_frontend/include"
unpack "$w_cudnn" nvidia/cudnn/include "$dest/cudnn/include"
unpack "$w_flashinfer" flashinfer/data/include "$dest/flashinfer/include"
# FlashInfer's kernels need the CCCL it vendors (cuda::fast_mod_div, newer than CUDA 13.0's): its libcudacxx
# headers (15 MB), which the FlashInfer peers put ahead of the toolkit's as FlashInfer's JIT does.
unpack "$w_flashinfer" flashinfer/data/cccl/libcudacxx/include "$dest/cccl/libcudacxx/include"
# FlashInfer's FA3 kernels include CUTLASS/CuTe from the wheel's flashinfer/data/cutlass: include/ and
# tools/util/include/ (cutlass_utils.cuh includes cutlass/util/command_line.h).
case ${PEERS_CUTLASS:-list} in
  list) unpack "$w_flashinfer" flashinfer/data/cutlass "$dest/cutlass" "$cutlass_list" ;;
  full)
    unpack "$w_flashinfer" flashinfer/data/cutlass/include "$dest/cutlass/include"
    unpack "$w_flashinfer" flashinfer/data/cutlass/tools/util/include "$dest/cutlass/tools/util/include" ;;
  none) rm -rf "$dest/cutlass" ;;
  *) echo "fetch-peers: PEERS_CUTLASS is list, full or none, not '$PEERS_CUTLASS'" >&2; exit 1 ;;
esac
# What was fetched, for the peers' version strings and the docs (rewritten only when it changes).
versions=$(printf '%s\n' "$frontend" "$cudnn" "$flashinfer")
if [[ ! -f $dest/versions.txt || $(cat "$dest/versions.txt") != "$versions" ]]; then
  printf '%s\n' "$versions" > "$dest/versions.txt"
fi
du -sh "$dest" | sed 's/^/fetch-peers: /'
