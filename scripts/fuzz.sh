#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (scripts/sanitized-build.sh: clang, -fsanitize=fuzzer,address,undefined)
# and runs each for SECONDS (default 15) from its seed corpus in fuzz/corpus/<target>/. New inputs go to
# build-sanitize/corpus/<target>/ (the repo's corpus is left as it is); a crash leaves crash-* files in
# build-sanitize/findings/ and fails the script. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (scripts/fuzz.sh 3600: a long run)
# Targets: axis, suite, report, cache, cli. Needs clang and libclang-rt (Debian: apt-get install clang libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(axis suite report cache cli)
build=${SANITIZE_BUILD_DIR:-build-sanitize}
root=$PWD
scripts/sanitized-build.sh $(printf 'fuzz_%s ' "${targets[@]}")
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t" "$build/findings"
  log="$root/$build/fuzz_$t.log"
  # -rss_limit_mb: a 2 GB cap per input; -max_len: inputs up to 64 KiB (deep nesting needs room).
  if (cd "$build/findings" && "$root/$build/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
        -print_final_stats=1 "$root/$build/corpus/$t" "$root/fuzz/corpus/$t" >"$log" 2>&1); then
    result=ok
  else
    result="CRASH (see $log and $build/findings/)"
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz_$t: ${seconds}s, $execs executions, $result"
done
exit $status
