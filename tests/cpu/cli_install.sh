#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, moved elsewhere (nothing absolute baked in), then used from another
# folder: a suite found by name beside the installed binary (one that exists only there), the installed suites,
# ./configs, a missing suite's message naming every folder searched, the installed Python tools finding the
# installed binary, and the Debian package from CPack (when dpkg-deb is there).
# Usage: cli_install.sh ATTNBENCH SOURCE_DIR   (the build tree is the binary's folder)
set -u
bin=$1
src=$2
build=$(cd "$(dirname "$bin")" && pwd)
source "$src/tests/cpu/expect_lib.sh"  # $work, cd there, expect_exit, ok, bad, finish

cmake --install "$build" --prefix "$work/prefix" >install.txt 2>&1 || { bad "cmake --install failed"; cat install.txt; }
for f in bin/attnbench share/attnbench/configs/ci.json share/attnbench/configs/llama3.1-8b-decode.json \
         share/attnbench/scripts/plot_report.py share/attnbench/scripts/peer_torch.py share/attnbench/scripts/ci-perf.sh \
         share/attnbench/python/attnbench/plot.py share/doc/attnbench/README.md share/doc/attnbench/report-format.md; do
  [[ -f "prefix/$f" ]] && ok || bad "install lacks $f"
done
[[ -x prefix/bin/attnbench && -x prefix/share/attnbench/scripts/plot_report.py ]] && ok || bad "installed programs not executable"
mv prefix moved  # the prefix the package was installed to is gone: the search is relative to the binary
inst="$work/moved/bin/attnbench"
cat >"$work/moved/share/attnbench/configs/only-installed.json" <<'JSON'
{"name": "only-installed", "description": "a suite that exists only in the installed share folder",
 "grids": [{"batch": 1, "heads": 2, "seq_len": 40, "head_dim": 16, "pages": 3, "kv_layout": "paged"}]}
JSON
mkdir elsewhere && cd elsewhere
"$inst" --config=only-installed --backend=cpu --strategies=head_batched,fused --max_time=0.02 -q --json=r.json \
  >run.txt 2>&1 && ok || { bad "installed binary cannot run a suite by name from another folder"; cat run.txt; }
python3 -c 'import json,sys; d=json.load(open("r.json")); assert len(d["results"]) == 2 and d["results"][0]["problem"]["seq_len"] == 40' \
  && ok || bad "the run of only-installed wrote the wrong rows"
"$inst" grid --config=ci --format=json >ci-installed.json 2>&1 && ok || bad "grid --config=ci from the install"
"$bin" grid --config="$src/configs/ci.json" --format=json >ci-source.json 2>&1
cmp -s ci-installed.json ci-source.json && ok || bad "the installed ci suite differs from the source tree's"
mkdir configs && cp "$work/moved/share/attnbench/configs/only-installed.json" configs/only-here.json
"$inst" grid --config=only-here >/dev/null 2>&1 && ok || bad "./configs is not searched"
expect_exit 2 "moved/share/attnbench/configs" "$inst" --config=no-such-suite --backend=cpu
expect_exit 2 "./configs" "$inst" grid --config=no-such-suite  # the message names every folder searched

# The installed Python tools find the installed binary (no $ATTNBENCH, not on the PATH).
env -u ATTNBENCH PATH=/usr/bin:/bin python3 "$work/moved/share/attnbench/scripts/peer_torch.py" --dry-run -q \
  --config=only-installed --json=peer.json >peer.txt 2>&1 && ok || { bad "installed peer_torch.py"; cat peer.txt; }
env -u ATTNBENCH PATH=/usr/bin:/bin python3 "$work/moved/share/attnbench/scripts/tune_repro.py" r.json r.json \
  >repro.txt 2>&1; [[ $? -eq 2 ]] && grep -q "schema" repro.txt && ok || { bad "installed tune_repro.py"; cat repro.txt; }

# The Debian package: the same tree under /usr.
if command -v dpkg-deb >/dev/null && command -v cpack >/dev/null; then
  (cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" >cpack.txt 2>&1) ||
    { bad "cpack -G DEB failed"; cat "$work/cpack.txt"; }
  deb=$(ls "$work"/deb/attnbench_*.deb 2>/dev/null | head -1)
  if [[ -n "$deb" ]]; then
    dpkg-deb -c "$deb" >deb.txt
    for f in ./usr/bin/attnbench ./usr/share/attnbench/configs/ci.json ./usr/share/doc/attnbench/README.md; do
      grep -q " $f\$" deb.txt && ok || bad "the .deb lacks $f"
    done
    dpkg-deb -f "$deb" Package Version Depends >deb-fields.txt
    grep -q "^Package: attnbench" deb-fields.txt && grep -q "^Version: 0" deb-fields.txt && ok || bad "deb fields"
  else
    bad "cpack wrote no .deb"
  fi
else
  echo "dpkg-deb or cpack not found: the Debian package is not built here"
fi
finish
