#!/usr/bin/env bash
# Fetches the in-process peers' headers from PyPI (docs/peers.md): cudnn_frontend's header-only C++ API, the
# cuDNN headers it compiles against, and FlashInfer's header-only kernels with the CCCL (libcudacxx) headers they
# need (and the CUTLASS/CuTe headers its Hopper path includes when PEERS_CUTLASS=1). Only headers land in DEST
# (third_party/peers by default, git ignored, about 25 MB: small enough to carry to a GPU machine); the wheels are
# cached in PEERS_WHEELS.
# libcudnn itself is not fetched: the cuDNN peer loads libcudnn.so.9 at run time (from LD_LIBRARY_PATH, or
# ATTNBENCH_CUDNN_LIB, e.g. PyTorch's nvidia/cudnn/lib). Configure with -DATTNBENCH_PEERS_DIR=DEST.
#   scripts/fetch-peers.sh [DEST]     exit 0: every header set in DEST; 1: a download failed (one line says which)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-third_party/peers}
wheels=${PEERS_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/attnbench/wheels}
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

unpack() {  # unpack WHEEL SUBDIR TARGET: SUBDIR of the wheel, alone, into TARGET (replaced whole)
  local tmp
  tmp=$(mktemp -d)
  python3 - "$1" "$2" "$tmp" <<'EOF'
import sys, zipfile
wheel, sub, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(sub + "/")]
    if not names:
        sys.exit(f"fetch-peers: {wheel} has no {sub}/")
    for n in names:
        z.extract(n, out)
EOF
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
if [[ ${PEERS_CUTLASS:-0} == 1 ]]; then
  unpack "$w_flashinfer" flashinfer/data/cutlass/include "$dest/cutlass/include"
fi
# What was fetched, for the peers' version strings and the docs.
cat > "$dest/versions.txt" <<EOF
$frontend
$cudnn
$flashinfer
EOF
du -sh "$dest" | sed 's/^/fetch-peers: /'
