#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (scripts/sanitized-build.sh: clang, -fsanitize=fuzzer,address,undefined)
# and runs each for SECONDS (default 15) from its seed corpus in fuzz/corpus/<target>/, as many at once as there
# are cores (FUZZ_JOBS; a fuzzer is one single-threaded process, so each still has a core to itself). New inputs go to
# build-sanitize/corpus/<target>/ (the repo's corpus is left as it is); a crash leaves crash-* files in
# build-sanitize/findings/ and fails the script. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (scripts/fuzz.sh 3600: a long run)
# Targets: axis, suite, report, cache, cli, journal, merge, plugin. Needs clang and libclang-rt (Debian: apt-get install clang libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(axis suite report cache cli journal merge plugin)
build=${SANITIZE_BUILD_DIR:-build-sanitize}
root=$PWD
scripts/sanitized-build.sh $(printf 'fuzz_%s ' "${targets[@]}")
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
jobs=${FUZZ_JOBS:-$(nproc)}
fuzz_one() {  # fuzz_one TARGET: runs it, then writes its line of the summary to $build/fuzz_TARGET.result
  local t=$1 log="$root/$build/fuzz_$1.log" result execs
  # -rss_limit_mb: a 2 GB cap per input; -max_len: inputs up to 64 KiB (deep nesting needs room).
  if (cd "$build/findings" && "$root/$build/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
        -print_final_stats=1 "$root/$build/corpus/$t" "$root/fuzz/corpus/$t" >"$log" 2>&1); then
    result=ok
  else
    result="CRASH (see $log and $build/findings/)"
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz_$t: ${seconds}s, $execs executions, $result" >"$root/$build/fuzz_$t.result"
}
mkdir -p "$build/findings"
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t"
  rm -f "$build/fuzz_$t.result"
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  cat "$build/fuzz_$t.result" 2>/dev/null || echo "fuzz_$t: no result (see $build/fuzz_$t.log)"
  grep -q ', ok$' "$build/fuzz_$t.result" 2>/dev/null || status=1
done
exit $status
