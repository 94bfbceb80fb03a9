#!/usr/bin/env bash
# Fetches cuobjdump and the nvdisasm it runs for `-sass` (CUDA 13, PyPI's nvidia-cuda-cuobjdump and
# nvidia-cuda-nvdisasm wheels) for scripts/sass-compare.sh, which looks for them there when the toolkit has none.
# The wheels are cached in the same folder as scripts/fetch-peers.sh's; the two binaries (about 6 MB) land in
# ATTNBENCH_TOOLS (default ~/.cache/attnbench/tools)/cuobjdump-VERSION/.
#   scripts/fetch-cuobjdump.sh     prints that folder; exit 0, or 1 when a download failed (one line says which)
set -euo pipefail
cache=${XDG_CACHE_HOME:-$HOME/.cache}/attnbench
wheels=${PEERS_WHEELS:-$cache/wheels}
version=13.2.51  # the oldest CUDA 13 release on PyPI; it reads what CUDA 13.0's nvcc writes (sm_90a included)
dest=${ATTNBENCH_TOOLS:-$cache/tools}/cuobjdump-$version
if [[ -x $dest/cuobjdump && -x $dest/nvdisasm ]]; then
  echo "$dest"
  exit 0
fi
mkdir -p "$wheels" "$dest"
for name in nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm; do
  glob="$wheels/${name//-/_}-$version-*.whl"
  if ! compgen -G "$glob" >/dev/null; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "$name==$version" >&2 ||
      { echo "fetch-cuobjdump: could not download $name==$version from PyPI" >&2; exit 1; }
  fi
  # shellcheck disable=SC2086
  python3 - "$(ls $glob | head -1)" "$dest" <<'EOF'
import os, sys, zipfile
wheel, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    bins = [n for n in z.namelist() if "/bin/" in n and not n.endswith("/")]
    if not bins:
        sys.exit(f"fetch-cuobjdump: {wheel} has no bin/")
    for n in bins:
        out = os.path.join(dest, os.path.basename(n))
        with z.open(n) as src, open(out + ".part", "wb") as dst:
            dst.write(src.read())
        os.chmod(out + ".part", 0o755)
        os.replace(out + ".part", out)
EOF
done
echo "$dest"
