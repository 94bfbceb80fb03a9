#!/usr/bin/env bash
# scripts/sass-compare.sh on tiny builds of tests/sass/sample.cu: two alike builds (the second from a copy of the
# file with one more line, so its anonymous namespace's hash differs) compare identical (exit 0); a build with
# -DCHANGED shows scale<2> as differs, extra as only-after and shift as identical (exit 1); a build with -DVARIANT,
# renamed (--rename) and with --new-ok, shows scale<2, false> identical to scale<2> (exit 0); bad input exits 2.
# Skipped (77) without nvcc or cuobjdump (scripts/fetch-cuobjdump.sh fetches one).
#   tests/sass/sass_compare.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: sass_compare.sh SOURCE_DIR}
compare=$src/scripts/sass-compare.sh
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[[ -x $nvcc ]] || { echo "SKIPPED: no nvcc"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # check WHAT EXPECTED ACTUAL
  if [[ $2 == "$3" ]]; then echo "ok: $1"; else echo "FAIL: $1 (expected $2, got $3)"; fail=1; fi
}

mkdir -p "$work/a" "$work/b" "$work/c" "$work/v"
cp "$src/tests/sass/sample.cu" "$work/a/sample.cu"
{ echo "// one more line"; cat "$src/tests/sass/sample.cu"; } > "$work/b/sample.cu"
cp "$src/tests/sass/sample.cu" "$work/c/sample.cu"
cp "$src/tests/sass/sample.cu" "$work/v/sample.cu"
for d in a b c v; do
  flags=()
  [[ $d == c ]] && flags=(-DCHANGED)
  [[ $d == v ]] && flags=(-DVARIANT)
  "$nvcc" -c -O3 -arch=sm_90a "${flags[@]}" "$work/$d/sample.cu" -o "$work/$d/sample.o" ||
    { echo "FAIL: nvcc could not build $d"; exit 1; }
done

"$compare" "$work/a" "$work/b" > "$work/same.txt" 2>&1
rc=$?
cat "$work/same.txt"
[[ $rc == 77 ]] && { echo "SKIPPED: no cuobjdump"; exit 77; }
check "alike builds: exit" 0 "$rc"
check "alike builds: both identical" 2 "$(grep -c '^identical ' "$work/same.txt")"

"$compare" --diff 6 "$work/a" "$work/c" > "$work/changed.txt" 2>&1
rc=$?
cat "$work/changed.txt"
check "changed build: exit" 1 "$rc"
check "changed build: scale<2> differs" 1 "$(grep -c '^differs .*_Z5scaleILi2EEvPf' "$work/changed.txt")"
check "changed build: shift identical" 1 "$(grep -c '^identical .*_GLOBAL__N_5shift' "$work/changed.txt")"
check "changed build: extra only after" 1 "$(grep -c '^only-after .*_Z5extraPf' "$work/changed.txt")"
check "changed build: the difference shown" 1 "$(grep -c -m1 '^    +[A-Z]' "$work/changed.txt")"

# A variant's template argument: renamed to the old name, scale<2, false> is identical; scale<2, true> is new.
"$compare" --rename 'ILi2ELb0EEvPf$=ILi2EEvPf' --new-ok "$work/a" "$work/v" > "$work/variant.txt" 2>&1
rc=$?
cat "$work/variant.txt"
check "variant build, renamed, new ok: exit" 0 "$rc"
check "variant build: scale<2, false> identical to scale<2>" 1 "$(grep -c '^identical .*_Z5scaleILi2EEvPf' "$work/variant.txt")"
check "variant build: scale<2, true> only after" 1 "$(grep -c '^only-after .*_Z5scaleILi2ELb1EEvPf' "$work/variant.txt")"
"$compare" --rename 'ILi2ELb0EEvPf$=ILi2EEvPf' "$work/a" "$work/v" > /dev/null 2>&1
check "variant build without --new-ok: exit" 1 $?
"$compare" --rename 'no-equals-sign' "$work/a" "$work/v" > /dev/null 2>&1
check "a --rename without '=': exit" 2 $?

"$compare" "$work/a/sample.o" "$work/b/sample.o" > /dev/null 2>&1
check "two objects: exit" 0 $?
"$compare" "$work/a" "$work/missing" > /dev/null 2>&1
check "a missing folder: exit" 2 $?
"$compare" "$work/a" "$work/b/sample.o" > /dev/null 2>&1
check "a folder against a file: exit" 2 $?
mkdir -p "$work/e1" "$work/e2"
"$compare" "$work/e1" "$work/e2" > /dev/null 2>&1
check "no device code on either side: exit" 2 $?
[[ $fail == 0 ]] && echo "sass_compare: passed" || echo "sass_compare: FAILED"
exit $fail
