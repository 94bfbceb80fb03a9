# Shared by the cli_*.sh tests (sourced, not a test itself): expect_exit CODE NEEDLE CMD... runs CMD and
# passes when it exits with exactly CODE and its stderr is exactly one line containing NEEDLE (no library
# text, no second line); finish prints the tally and fails the test on any failure. Sourcing it makes a
# scratch folder $work, enters it, and removes it on exit.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
pass=0
fail=0
expect_exit() {
  local code=$1 needle=$2
  shift 2
  "$@" >stdout.txt 2>stderr.txt
  local rc=$?
  local lines
  lines=$(grep -c '' stderr.txt)
  if [[ $rc -eq $code && $lines -eq 1 ]] && grep -qF -- "$needle" stderr.txt; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $* (rc=$rc, wanted $code; stderr lines=$lines, wanted 1 containing '$needle')"
    head -c 2000 stderr.txt
  fi
}
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() {
  echo "$pass passed, $fail failed"
  [[ $fail -eq 0 ]]
}
