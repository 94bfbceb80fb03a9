#!/usr/bin/env bash
# Regenerates the sample output in the docs from stored real reports, so that it cannot go stale:
#   scripts/doc-samples.sh            rewrite every generated block in README.md and docs/report-format.md
#   scripts/doc-samples.sh --check    change nothing; exit 1 (with a diff) when a block differs from what the
#                                     binary prints now (the `doc_samples` CPU test runs this)
# A generated block is a fenced code block between two markers:
#   <!-- doc-sample: attnbench report docs/results/h100-default.json --format=csv | head -2 -->
#   ```text
#   ...
#   ```
#   <!-- /doc-sample -->
# The marker's command is one of
#   attnbench ARGS... [| head -N]     the binary's output ($ATTNBENCH, else build/attnbench), first N lines
#   report-row FILE STRATEGY          the stored report itself with `results` cut to STRATEGY's first row
#   flat-row FILE STRATEGY            `attnbench report FILE --format=json` with `rows` cut to STRATEGY's first
# Paths are relative to the repository root, where every command runs.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ ${1:-} == --check ]] && { check=1; shift; }
bin=${ATTNBENCH:-build/attnbench}
[[ -x $bin ]] || { echo "doc-samples: no attnbench binary at '$bin' (set ATTNBENCH)" >&2; exit 2; }
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=(README.md docs/report-format.md)
ATTNBENCH=$bin python3 - "$check" "${files[@]}" <<'PY'
import difflib, json, os, re, shlex, subprocess, sys

check, files = sys.argv[1] == "1", sys.argv[2:]
binary = os.environ["ATTNBENCH"]
BLOCK = re.compile(r"(<!-- doc-sample: (.+?) -->\n```[a-z]*\n)(.*?)(```\n<!-- /doc-sample -->)", re.S)


def run(args):
    out = subprocess.run([binary] + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"doc-samples: `attnbench {' '.join(args)}` exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def first_of(rows, strategy, what):
    for r in rows:
        if r.get("strategy") == strategy:
            return r
    sys.exit(f"doc-samples: {what} has no row of strategy '{strategy}'")


def render(command):
    words = shlex.split(command)
    head = None
    if "|" in words:
        i = words.index("|")
        if words[i + 1:i + 2] != ["head"] or len(words) != i + 3 or not words[i + 2].startswith("-"):
            sys.exit(f"doc-samples: only '| head -N' may follow a command: {command}")
        head, words = int(words[i + 2][1:]), words[:i]
    if words[0] == "attnbench":
        text = run(words[1:])
    elif words[0] == "report-row" and len(words) == 3:
        doc = json.load(open(words[1]))
        doc["results"] = [first_of(doc["results"], words[2], words[1])]
        text = json.dumps(doc, indent=2) + "\n"
    elif words[0] == "flat-row" and len(words) == 3:
        doc = json.loads(run(["report", words[1], "--format=json"]))
        doc["rows"] = [first_of(doc["rows"], words[2], words[1])]
        text = json.dumps(doc, indent=2) + "\n"
    else:
        sys.exit(f"doc-samples: unknown command in a marker: {command}")
    if head is not None:
        text = "".join(text.splitlines(keepends=True)[:head])
    return text


stale = 0
for path in files:
    old = open(path).read()
    new = BLOCK.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), old)
    if len(BLOCK.findall(old)) == 0:
        sys.exit(f"doc-samples: {path} has no generated block")
    if new == old:
        continue
    if check:
        stale += 1
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, path + " (generated)"))
    else:
        tmp = path + ".tmp"
        open(tmp, "w").write(new)
        os.replace(tmp, path)
        print(f"doc-samples: rewrote {path}")
if stale:
    sys.exit(f"doc-samples: {stale} file(s) differ from what the binary prints; run scripts/doc-samples.sh")
PY
