#!/usr/bin/env bash
# Hostile JSON input files through the real binary (issue 16, findings 2 and 6): documents nested deeper
# than 64 levels, text after the document, mistyped fields and directories given as files are refused by
# every reader (report, compare, run --cache, tune --cache, --config) with one line and exit 2, never a
# crash, library text or exit 3. Usage: cli_json_input.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work
tiny=(--backend=cpu --quiet --batch=1 --heads=1 --seq_len=16 --head_dim=8 --strategies=fused --warmup=0)
small=("${tiny[@]}" --max_samples=1)
suite=(--backend=cpu --quiet --strategies=fused --warmup=0 --max_samples=1)  # --config refuses size flags
"$bin" "${small[@]}" --json=good.json >/dev/null 2>&1 || bad "could not make a report"
"$bin" tune "${tiny[@]}" --cache=cache.json >/dev/null 2>&1 || bad "could not make a cache"

# mutate IN OUT PYTHON: OUT is IN after `d` was edited by the Python statement(s), written as JSON text.
mutate() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], "w").write(d if isinstance(d, str) else json.dumps(d))
PY
}
deep() { python3 -c "import sys; n=int(sys.argv[1]); print('['*n + ']'*n)" "$1"; }

# Nesting: 70,000 deep in a row's problem, 100,000 in settings, 500,000 anywhere in a cache or a config.
deep 70000 >deep70k.txt
deep 100000 >deep100k.txt
deep 500000 >deep500k.txt
mutate good.json deep_problem.json 'd = json.dumps(d).replace("\"problem\": {", "\"problem\": " + open("deep70k.txt").read().strip() + ", \"p\": {", 1)'
mutate good.json deep_settings.json 'd = json.dumps(d).replace("\"settings\": {", "\"settings\": " + open("deep100k.txt").read().strip() + ", \"s\": {", 1)'
mutate cache.json deep_cache.json 'd = json.dumps(d)[:-1] + ", \"x\": " + open("deep500k.txt").read().strip() + "}"'
expect_exit 2 "nested more than 64 levels" "$bin" report deep_problem.json
expect_exit 2 "nested more than 64 levels" "$bin" compare good.json deep_settings.json
expect_exit 2 "nested more than 64 levels" "$bin" compare deep_settings.json good.json
expect_exit 2 "nested more than 64 levels" "$bin" "${small[@]}" --cache=deep_cache.json
cp deep_cache.json tune_target.json
expect_exit 2 "nested more than 64 levels" "$bin" tune "${tiny[@]}" --cache=tune_target.json
cmp -s deep_cache.json tune_target.json && ok || bad "tune changed a cache it refused"
{ printf '{"grids": [{"batch": 1, "comment": '; cat deep500k.txt; printf '}]}'; } >deep_config.json
expect_exit 2 "nested more than 64 levels" "$bin" "${suite[@]}" --config=deep_config.json
# 64 levels are fine, 65 are not (the limit is exact).
python3 -c "print('{\"grids\": [{\"batch\": 1, \"comment\": ' + '['*61 + ']'*61 + '}]}')" >depth64.json
python3 -c "print('{\"grids\": [{\"batch\": 1, \"comment\": ' + '['*62 + ']'*62 + '}]}')" >depth65.json
"$bin" "${suite[@]}" --config=depth64.json >stdout.txt 2>stderr.txt && ok || bad "a config 64 levels deep was refused: $(cat stderr.txt)"
expect_exit 2 "nested more than 64 levels" "$bin" "${suite[@]}" --config=depth65.json

# Text after the document.
{ cat good.json; echo '{"schema": "attnbench.report/1", "results": []}'; } >trailing.json
expect_exit 2 "text after the document" "$bin" report trailing.json
{ cat cache.json; echo 'garbage'; } >trailing_cache.json
expect_exit 2 "text after the document" "$bin" "${small[@]}" --cache=trailing_cache.json
printf '{"grids": [{"batch": 1}]} ]' >trailing_config.json
expect_exit 2 "text after the document" "$bin" "${suite[@]}" --config=trailing_config.json

# A number no double holds (found by fuzz_suite: exit 3 with library text before).
printf '{"grids": [{"batch": 1e500}]}' >huge_number.json
expect_exit 2 "huge_number.json': malformed JSON (a number out of range)" "$bin" "${suite[@]}" --config=huge_number.json
mutate good.json huge_median.json 'd = json.dumps(d).replace("\"median\": ", "\"median\": 1e500, \"m\": ", 1)'
expect_exit 2 "malformed JSON (a number out of range)" "$bin" report huge_median.json
mutate cache.json huge_cache.json 'd = json.dumps(d)[:-1] + ", \"x\": -1e999}"'
expect_exit 2 "malformed JSON (a number out of range)" "$bin" "${small[@]}" --cache=huge_cache.json

# Mistyped fields: one line naming the file and the field, exit 2.
mutate good.json row_number.json 'd["results"][0] = 5'
mutate good.json causal_yes.json 'd["results"][0]["problem"]["causal"] = "yes"'
mutate good.json median_text.json 'd["results"][0]["time_ms"]["median"] = "fast"'
mutate good.json warnings_number.json 'd["warnings"] = [1]'
mutate good.json results_object.json 'd["results"] = {}'
expect_exit 2 "row_number.json': results[0] must be an object" "$bin" report row_number.json
expect_exit 2 "causal_yes.json': results[0].problem.causal must be true or false" "$bin" report causal_yes.json
expect_exit 2 "causal_yes.json': results[0].problem.causal must be true or false" "$bin" compare good.json causal_yes.json
expect_exit 2 "results[0].time_ms.median must be a number or null" "$bin" compare median_text.json good.json
expect_exit 2 "warnings[0] must be a string" "$bin" report warnings_number.json --format=md
expect_exit 2 "results must be a list" "$bin" report results_object.json --format=csv
mutate cache.json cache_top.json 'd["fused"][0]["tuned_at"] = 7'
expect_exit 2 "field 'tuned_at' must be a string" "$bin" "${small[@]}" --cache=cache_top.json

# A directory given as a file.
mkdir adir
expect_exit 2 "adir': is a directory" "$bin" report adir
expect_exit 2 "adir': is a directory" "$bin" compare adir good.json
expect_exit 2 "adir': is a directory" "$bin" "${small[@]}" --cache=adir
expect_exit 2 "adir': is a directory" "$bin" "${suite[@]}" --config=adir
expect_exit 2 "is a directory" "$bin" tune "${tiny[@]}" --cache=adir
finish
