#!/usr/bin/env bash
# Every file the tool writes goes through one writer (issue 16, findings 3, 4 and 9): targets that are not
# regular files (a pipe, /dev/stdout) are written in place and never replaced, a link to a regular file
# stays a link, a read-only target is refused with one line and exit 2 and left as it was, an existing
# file keeps its mode, no temporary file is left, and the fresh-process fallback uses a private directory
# under TMPDIR that it removes. Usage: cli_file_writes.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
small=(--backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused --warmup=0 --max_samples=1)
umask 022
"$bin" "${small[@]}" --json=good.json >/dev/null 2>&1 || bad "no report"

# /dev/stdout: written through, still a link (the atomic rename used to replace it as root).
"$bin" "${small[@]}" --no_table --json=/dev/stdout >stdout_report.txt 2>stderr.txt
rc=$?
[[ $rc -eq 0 && -L /dev/stdout ]] && grep -q '"schema": "attnbench.report/1"' stdout_report.txt && ok ||
  bad "--json=/dev/stdout (rc=$rc): $(cat stderr.txt)"
# A named pipe: read on the other end, still a pipe afterwards.
mkfifo pipe
cat pipe >from_pipe.txt &
reader=$!
"$bin" "${small[@]}" --json=pipe >/dev/null 2>stderr.txt
rc=$?
wait $reader
[[ $rc -eq 0 && -p pipe ]] && grep -q '"schema": "attnbench.report/1"' from_pipe.txt && ok || bad "--json=pipe (rc=$rc)"
"$bin" report good.json --format=md --output=/dev/null >/dev/null 2>stderr.txt && [[ -c /dev/null ]] && ok || bad "report --output=/dev/null"
# A link to a regular file: the file is replaced, the link stays.
echo old >real.json
ln -s real.json link.json
"$bin" "${small[@]}" --json=link.json >/dev/null 2>&1
[[ -L link.json ]] && grep -q attnbench.report real.json && ok || bad "link.json was replaced or real.json not written"
# A link to nowhere is refused (writing would replace the link).
ln -s missing/nowhere.json dangling.json
expect_exit 2 "cannot write 'dangling.json': a symbolic link to a missing file" "$bin" "${small[@]}" --json=dangling.json
# Read-only targets: refused before any work, left as they were.
for t in ro.json ro_cache.json ro.md; do echo keep >$t; chmod 444 $t; done
expect_exit 2 "cannot write 'ro.json': the file is read-only" "$bin" "${small[@]}" --json=ro.json
"$bin" tune --backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused --cache=cache.json >/dev/null 2>&1 || bad "no cache"
cp cache.json ro_cache.json 2>/dev/null; chmod 444 ro_cache.json
cp ro_cache.json ro_cache.before
expect_exit 2 "cannot write 'ro_cache.json': the file is read-only" "$bin" tune --backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused --cache=ro_cache.json
expect_exit 2 "cannot write 'ro.md': the file is read-only" "$bin" report good.json --format=md --output=ro.md
expect_exit 2 "cannot write 'ro.md': the file is read-only" "$bin" compare good.json good.json --output=ro.md
[[ $(cat ro.json) == keep && $(cat ro.md) == keep && $(stat -c %a ro.json) == 444 && $(stat -c %a ro_cache.json) == 444 ]] &&
  cmp -s ro_cache.json ro_cache.before && ok || bad "a read-only target changed"
# An existing file keeps its mode; a new one gets 0666 & ~umask.
echo old >mode.json
chmod 640 mode.json
"$bin" "${small[@]}" --json=mode.json >/dev/null 2>&1
[[ $(stat -c %a mode.json) == 640 && $(stat -c %a good.json) == 644 ]] && grep -q attnbench.report mode.json && ok ||
  bad "modes: mode.json $(stat -c %a mode.json), good.json $(stat -c %a good.json)"
"$bin" report good.json --format=csv --output=out.csv >/dev/null 2>&1 && [[ $(stat -c %a out.csv) == 644 ]] && ok || bad "report --output"
[[ -z $(ls ./*.tmp.* 2>/dev/null) ]] && ok || bad "temporary files left: $(ls ./*.tmp.*)"
# The fresh-process fallback: a private directory under TMPDIR, removed afterwards; the rows arrive.
mkdir tmpdir
TMPDIR=$PWD/tmpdir ATTNBENCH_INJECT_FAULT=head_batched "$bin" --backend=cpu --quiet --batch=1 --heads=1 --seq_len=16,24 \
  --head_dim=8 --warmup=0 --max_samples=1 --json=resumed.json >/dev/null 2>stderr.txt
rc=$?
[[ $rc -eq 1 && -z $(ls -A tmpdir) ]] && grep -q "fresh process" resumed.json && ok || bad "fresh process (rc=$rc, tmpdir: $(ls -A tmpdir))"
finish
