#!/usr/bin/env bash
# Renders the numbers the docs show from the stored reports in docs/results/, so that they cannot go stale:
#   scripts/doc-samples.sh            rewrite every generated block of README.md and docs/*.md
#   scripts/doc-samples.sh --check    change nothing; exit 1 (with a diff or a reason) when a block differs from
#                                     what the binary and the reports give now, or when a report a doc uses is
#                                     older than the last commit that changed kernels/ or src/ (the `doc_samples`
#                                     CPU test runs this)
#   scripts/doc-samples.sh [--check] FILE...   only these files
# The reports themselves are regenerated on a GPU by scripts/doc-results.sh, which runs this script last.
#
# Two kinds of generated block. A sample is a fenced code block between two markers:
#   <!-- doc-sample: attnbench report docs/results/h100-default.json --format=csv | head -2 -->
#   ```text
#   ...
#   ```
#   <!-- /doc-sample -->
# whose command is one of
#   attnbench ARGS... [| head -N]     the binary's output ($ATTNBENCH, else build/attnbench), first N lines
#   report-row FILE STRATEGY          the stored report itself with `results` cut to STRATEGY's first row
#   flat-row FILE STRATEGY            `attnbench report FILE --format=json` with `rows` cut to STRATEGY's first
#   cache-excerpt FILE                a tune cache with `gemm` and `fused` cut to their first entry each
# A text block is prose or a table, anywhere in a paragraph (never at the start of a line: a line that starts
# with an HTML comment is an HTML block in Markdown) or on lines of its own around a table:
#   ... fused <!-- doc-text: ratios docs/results/h100-default.json fused peer:torch-cudnn -->...<!-- /doc-text -->
# whose command is one of (FILE a report unless it says CACHE; every time is a row's median):
#   device FILE                       the GPU the report (or cache) was measured on
#   made FILE...                      "GPU, commit C, YYYY-MM-DD" of each file (one clause when they agree)
#   ratios FILE A B...                "`A` takes R× the time of `B1` and R× that of `B2`" (the first problem
#                                     where A ran)
#   range FILE A1,A2,... B            "R1-R2× the time of `B`" over the Ai on the problem where they ran
#   versus FILE A B                   "R1-R2× `B`'s time on the N problems where both ran, at or under it on K"
#   copy FILE A                       "P1-P2% of the measured copy bandwidth" over A's rows
#   fused-table FILE [PEER...]        a table, one row per problem of fused: tile, time, TFLOP/s, GB/s, %copy,
#                                     each peer's time and fused/peer (default peer:torch-cudnn peer:torch-flash)
#   tiles-table CACHE [REPORT...]     a table of the fused entries: default tile and time, best tile and time
#                                     (problem labels from the reports' rows)
#   gemm-table CACHE                  a table of the GEMM entries: strategy, shape, candidates, times, gain
#   tune-sentence CACHE               one sentence: shapes, candidates, range of the GEMM gains, fused tiles
#   tile FILE STRATEGY                the fused tile of STRATEGY's first ok row
#   range-name FILE STRATEGY          the NVTX range of STRATEGY's first row under --profile
#   kernels FILE STRATEGY             the kernels CUPTI counted in STRATEGY's first row
# Paths are relative to the repository root, where every command runs.
#
# Staleness: every report or cache a block uses, and every docs/results/*.json that README.md or docs/*.md
# names, must record (tool.git) a commit that contains the last commit changing kernels/ or src/
# (`git merge-base --is-ancestor`); "unknown", "-dirty" or a commit this checkout lacks fail. Outside a git
# checkout (a source tarball) or in a shallow clone the staleness check is skipped, with one line saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ ${1:-} == --check ]] && { check=1; shift; }
bin=${ATTNBENCH:-build/attnbench}
[[ -x $bin ]] || { echo "doc-samples: no attnbench binary at '$bin' (set ATTNBENCH)" >&2; exit 2; }
ATTNBENCH=$bin python3 - "$check" "$@" <<'PY'
import difflib, glob, json, os, re, shlex, statistics, subprocess, sys

check, explicit = sys.argv[1] == "1", sys.argv[2:]
binary = os.environ["ATTNBENCH"]
SAMPLE = re.compile(r"(<!-- doc-sample: (.+?) -->\n```[a-z]*\n)(.*?)(```\n<!-- /doc-sample -->)", re.S)
TEXT = re.compile(r"(<!-- doc-text: (.+?) -->)(.*?)(<!-- /doc-text -->)", re.S)
CITED = re.compile(r"(?<![\w./-])(docs/results/[\w.+-]+(?:/[\w.+-]+)*\.json)|\]\((results/[\w.+-]+(?:/[\w.+-]+)*\.json)\)")
STALE_HINT = "regenerate the reports with scripts/doc-results.sh on a GPU"


class Missing(Exception):
    pass


def die(msg):
    sys.exit(f"doc-samples: {msg}")


def run(args):
    out = subprocess.run([binary] + args, capture_output=True, text=True)
    if out.returncode != 0:
        die(f"`attnbench {' '.join(args)}` exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


_json, _flat = {}, {}


def load(path):
    if not os.path.isfile(path):
        raise Missing(path)
    if path not in _json:
        _json[path] = json.load(open(path))
    return _json[path]


def flat(path):
    """The binary's flat rows of a report (labels, tiles, ratios as the binary defines them)."""
    load(path)
    if path not in _flat:
        _flat[path] = json.loads(run(["report", path, "--json=-"]))
    return _flat[path]


def first_of(rows, strategy, what):
    for r in rows:
        if r.get("strategy") == strategy:
            return r
    die(f"{what} has no row of strategy '{strategy}'")


def ok_rows(path, strategy):
    return [r for r in flat(path)["rows"] if r["strategy"] == strategy and r["status"] == "ok" and r.get("median_ms")]


def row_of(path, strategy, key):
    for r in flat(path)["rows"]:
        if r["strategy"] == strategy and r["key"] == key and r["status"] == "ok" and r.get("median_ms"):
            return r
    return None


# ---- formatting ---------------------------------------------------------------------------------------

def ms(x):
    return f"{x:#.4g}".rstrip(".")


def rate(x):
    return f"{x:.0f}" if x >= 100 else f"{x:#.3g}".rstrip(".")


def times(x):
    return f"{x:.2f}×"


def times3(x):
    return f"{x:.3f}×"


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo).rstrip('×%')}-{fmt(hi)}"


def pct(x):
    return f"{100 * x:.0f}%"


def code(s):
    return f"`{s}`"


def table(head, rows, right):
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("--:" if i in right else "---" for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def device_of(path):
    d = load(path)
    if d.get("schema") == "attnbench.cache/1":
        envs = d.get("environments") or [{}]
        return envs[0].get("gpu") or envs[0].get("backend", "?")
    return d.get("device", {}).get("name", "?")


def made_of(path):
    d = load(path)
    if d.get("schema") == "attnbench.cache/1":
        stamps = [e.get("tuned_at", "") for kind in ("gemm", "fused") for e in d.get(kind, [])]
        date = min(stamps)[:10] if stamps else "?"
    else:
        date = (d.get("created") or "?")[:10]
    return f"{device_of(path)}, commit {d.get('tool', {}).get('git', 'unknown')}, {date}"


# ---- text blocks ----------------------------------------------------------------------------------------

def t_ratios(path, a, *bs):
    mine = ok_rows(path, a)
    if not mine:
        return f"{code(a)} has no timed row"
    r = mine[0]
    parts = []
    for i, b in enumerate(bs):
        o = row_of(path, b, r["key"])
        if o is None:
            parts.append(f"{code(b)} has no timed row")
            continue
        x = times(r["median_ms"] / o["median_ms"])
        parts.append(f"{x} the time of {code(b)}" if i == 0 else f"{x} that of {code(b)}")
    head = f"{code(a)} takes "
    if len(parts) == 1:
        return head + parts[0]
    return head + ", ".join(parts[:-1]) + " and " + parts[-1]


def ratios_to(path, strategies, b):
    """median(a) / median(b) on every problem where a strategy of the comma list `strategies` and b both ran."""
    ratios = []
    for a in strategies.split(","):
        for r in ok_rows(path, a):
            o = row_of(path, b, r["key"])
            if o is not None:
                ratios.append(r["median_ms"] / o["median_ms"])
    return ratios


def t_range(path, strategies, b):
    ratios = ratios_to(path, strategies, b)
    if not ratios:
        return f"(no problem where {code(b)} and these strategies ran)"
    return f"{span(ratios, times)} the time of {code(b)}"


def t_versus(path, a, b):
    ratios = ratios_to(path, a, b)
    if not ratios:
        return f"(no problem where {code(a)} and {code(b)} both ran)"
    under = sum(1 for x in ratios if x <= 1.0)
    n = len(ratios)
    where = f"the {n} problems where both ran" if n > 1 else "the one problem where both ran"
    return f"{span(ratios, times)} {code(b)}'s time on {where}, at or under it on {under}"


def t_copy(path, a):
    fr = [r["copy_fraction"] for r in ok_rows(path, a) if r.get("copy_fraction")]
    if not fr:
        return f"(no row of {code(a)} with a copy fraction)"
    return f"{span(fr, pct)} of the measured copy bandwidth"


def t_fused_table(path, *peers):
    peers = peers or ("peer:torch-cudnn", "peer:torch-flash")
    head = ["problem", "tile", "ms", "TFLOP/s", "GB/s", "%copy"]
    for p in peers:
        name = p.removeprefix("peer:torch-")
        head += [f"{name} ms", f"fused / {name}"]
    rows = []
    for r in ok_rows(path, "fused"):
        line = [r["label"], code(r.get("tile") or "-"), ms(r["median_ms"]), rate(r["tflops"]), rate(r["gbps"]),
                pct(r["copy_fraction"]) if r.get("copy_fraction") else "-"]
        for p in peers:
            o = row_of(path, p, r["key"])
            line += [ms(o["median_ms"]), f"{r['median_ms'] / o['median_ms']:.2f}"] if o else ["-", "-"]
        rows.append(line)
    if not rows:
        return f"(no timed fused row in {path})"
    return table(head, rows, set(range(2, len(head))))


def labels_by_cache_key(reports):
    out = {}
    for path in reports:
        for r in flat(path)["rows"]:
            out.setdefault(r.get("cache_key"), (len(out), r["label"]))
    return out


def t_tiles_table(cache, *reports):
    labels = labels_by_cache_key(reports)
    entries = sorted(load(cache).get("fused", []), key=lambda e: labels.get(e["key"], (len(labels), e["key"]))[0])
    rows = []
    for e in entries:
        best, dflt = e["best_ms"], e["default_ms"]
        rows.append([labels.get(e["key"], (0, e["key"]))[1], code(e["default_tile"]), ms(dflt), code(e["tile"]["name"]),
                     ms(best), f"{dflt / best:.3f}"])
    if not rows:
        return f"(no fused entry in {cache})"
    return table(["problem", "default tile", "ms", "best tile", "ms", "default / best"], rows, {2, 4, 5})


def gemm_what(e):
    s = e["shape"]
    t = "T" if s.get("b_trans") else "N"
    mode = {"single": "", "strided": f" strided ×{s['batch']}", "pointer_array": f" pointer array ×{s['batch']}"}
    return f"m{s['m']} n{s['n']} k{s['k']} N{t} {s['a_type']}→{s['c_type']}{mode.get(s['batch_mode'], ' ' + s['batch_mode'])}"


def t_gemm_table(cache):
    rows = []
    for e in load(cache).get("gemm", []):
        rows.append([gemm_what(e), code(e["measured_with"]["strategy"]), str(e["candidates"]), ms(e["heuristic_ms"]),
                     ms(e["best_ms"]), f"{e['gain']:.3f}"])
    if not rows:
        return f"(no GEMM entry in {cache})"
    return table(["GEMM", "tuned with", "candidates", "heuristic ms", "tuned ms", "gain"], rows, {2, 3, 4, 5})


def t_tune_sentence(cache):
    d = load(cache)
    g, f = d.get("gemm", []), d.get("fused", [])
    parts = []
    if g:
        gains = [e["gain"] for e in g]
        cands = sum(e["candidates"] for e in g)
        parts.append(f"its {len(g)} GEMM shapes tried {cands} candidates in all, and the algorithms chosen ran "
                     f"{span(gains, times3)} as fast as cuBLASLt's heuristic choice (median {times3(statistics.median(gains))})")
    for e in f:
        if e["tile"]["name"] == e["default_tile"]:
            parts.append(f"the fused tile search kept the default tile {code(e['default_tile'])}")
        else:
            parts.append(f"the fused tile search found {code(e['tile']['name'])} {times(e['default_ms'] / e['best_ms'])} "
                         f"as fast as the default {code(e['default_tile'])}")
    return "; ".join(parts) if parts else f"(nothing tuned in {cache})"


def first_ok(path, strategy):
    rows = ok_rows(path, strategy) or [r for r in flat(path)["rows"] if r["strategy"] == strategy]
    if not rows:
        die(f"{path} has no row of strategy '{strategy}'")
    return rows[0]


def t_tile(path, strategy):
    return code(first_ok(path, strategy).get("tile") or "-")


def t_range_name(path, strategy):
    r = first_ok(path, strategy)
    name = f"profile {r['label']} {strategy}" + (f" {r['tile']}" if r.get("tile") else "")
    return code(re.sub(r"[/@\[\]]", "_", name))


def t_kernels(path, strategy):
    names = first_ok(path, strategy).get("kernel_names")
    if not names:
        return "(no kernel names were measured)"
    out = []
    for n in names.split(";"):
        m = re.fullmatch(r"(.*) x(\d+)", n.strip())
        out.append(f"{code(m.group(1))} ×{m.group(2)}" if m else code(n.strip()))
    return ", ".join(out)


TEXTS = {"device": (1, lambda p: device_of(p)), "ratios": (3, t_ratios), "range": (3, t_range), "versus": (3, t_versus),
         "copy": (2, t_copy), "fused-table": (1, t_fused_table), "tiles-table": (1, t_tiles_table),
         "gemm-table": (1, t_gemm_table), "tune-sentence": (1, t_tune_sentence), "tile": (2, t_tile),
         "range-name": (2, t_range_name), "kernels": (2, t_kernels)}
EXACT = {"device": 1, "range": 3, "versus": 3, "copy": 2, "gemm-table": 1, "tune-sentence": 1, "tile": 2,
         "range-name": 2, "kernels": 2}
TABLES = {"fused-table", "tiles-table", "gemm-table"}


def render_text(command):
    words = shlex.split(command)
    name, args = words[0], words[1:]
    if name == "made":
        if not args:
            die("made needs a file")
        made = list(dict.fromkeys(made_of(p) for p in args))
        return "; ".join(made)
    if name not in TEXTS:
        die(f"unknown command in a doc-text marker: {command}")
    least, fn = TEXTS[name]
    if len(args) < least or (name in EXACT and len(args) != EXACT[name]):
        die(f"wrong number of arguments in a doc-text marker: {command}")
    text = fn(*args)
    return f"\n\n{text}\n\n" if name in TABLES else text


# ---- samples (fenced) ------------------------------------------------------------------------------------

def render_sample(command):
    words = shlex.split(command)
    head = None
    if "|" in words:
        i = words.index("|")
        if words[i + 1:i + 2] != ["head"] or len(words) != i + 3 or not words[i + 2].startswith("-"):
            die(f"only '| head -N' may follow a command: {command}")
        head, words = int(words[i + 2][1:]), words[:i]
    for w in words[1:]:
        if w.endswith(".json") and not w.startswith("-"):
            load(w)  # Missing when it is not there
    if words[0] == "attnbench":
        text = run(words[1:])
    elif words[0] == "report-row" and len(words) == 3:
        doc = json.loads(json.dumps(load(words[1])))
        doc["results"] = [first_of(doc["results"], words[2], words[1])]
        text = json.dumps(doc, indent=2) + "\n"
    elif words[0] == "flat-row" and len(words) == 3:
        doc = json.loads(json.dumps(flat(words[1])))
        doc["rows"] = [first_of(doc["rows"], words[2], words[1])]
        text = json.dumps(doc, indent=2) + "\n"
    elif words[0] == "cache-excerpt" and len(words) == 2:
        doc = json.loads(json.dumps(load(words[1])))
        for kind in ("gemm", "fused"):
            doc[kind] = doc.get(kind, [])[:1]
        text = json.dumps(doc, indent=2) + "\n"
    else:
        die(f"unknown command in a doc-sample marker: {command}")
    if head is not None:
        text = "".join(text.splitlines(keepends=True)[:head])
    return text


def files_of(command):
    return [w for w in shlex.split(command) if w.endswith(".json") and not w.startswith("-")]


# ---- staleness -------------------------------------------------------------------------------------------

def git(*args):
    p = subprocess.run(["git", *args], capture_output=True, text=True)
    return p.returncode, p.stdout.strip()


def source_change():
    """(commit, one-line description) of the last commit that changed kernels/ or src/, or (None, why skipped)."""
    try:
        rc, top = git("rev-parse", "--show-toplevel")
    except OSError:
        return None, "git is not installed"
    if rc != 0 or os.path.realpath(top) != os.path.realpath("."):
        return None, "the source tree is not a git checkout"
    if git("rev-parse", "--is-shallow-repository")[1] == "true":
        return None, "the checkout is a shallow clone (a report's commit may be missing from it)"
    rc, line = git("log", "-1", "--format=%H%x09%h %cs: %s", "--", "kernels", "src")
    if rc != 0 or not line:
        return None, "no commit changes kernels/ or src/"
    full, desc = line.split("\t", 1)
    return full, desc


def commit_of(describe):
    """The commit hash in a `git describe --always --dirty` string (a bare hash, or TAG-N-gHASH)."""
    m = re.fullmatch(r"(?:.*-g)?([0-9a-f]{7,40})", describe)
    return m.group(1) if m else None


def stale_reason(path, last, last_desc):
    d = load(path)
    if d.get("schema") not in ("attnbench.report/1", "attnbench.cache/1"):
        return None
    describe = str(d.get("tool", {}).get("git", "unknown"))
    if describe == "unknown" or not describe:
        return f"{path} records no commit (tool.git is '{describe}')"
    if describe.endswith("-dirty"):
        return f"{path} was made by a build of uncommitted changes (tool.git is '{describe}')"
    h = commit_of(describe)
    rc, full = git("rev-parse", "--verify", "--quiet", f"{h}^{{commit}}") if h else (1, "")
    if rc != 0:
        return f"{path} records commit '{describe}', which this checkout does not have"
    if git("merge-base", "--is-ancestor", last, full)[0] != 0:
        return f"{path} records commit {describe}, older than the last change to kernels/ or src/ ({last_desc})"
    return None


# ---- main ------------------------------------------------------------------------------------------------

if explicit:
    files = explicit
else:
    files = ["README.md"] + sorted(glob.glob("docs/*.md"))
texts = {p: open(p).read() for p in files}
marked = [p for p in files if SAMPLE.search(texts[p]) or TEXT.search(texts[p])]
for p in explicit:
    if p not in marked:
        die(f"{p} has no generated block")

problems = []  # (kind, message)
used = {}      # report path -> first doc naming it
for p in marked:
    for m in list(SAMPLE.finditer(texts[p])) + list(TEXT.finditer(texts[p])):
        for f in files_of(m.group(2)):
            used.setdefault(f, p)
    for m in TEXT.finditer(texts[p]):
        inline = "\n" not in m.group(3)
        line_start = texts[p].rfind("\n", 0, m.start()) + 1
        if inline and not texts[p][line_start:m.start()].strip():
            problems.append(("marker", f"{p}: an inline doc-text block starts a line (Markdown would show it raw): "
                                       f"{m.group(1)}"))
for p in files:
    for full, linked in CITED.findall(texts[p]):
        f = full or ("docs/" + linked if p.startswith("docs/") else linked)
        used.setdefault(f, p)

missing = sorted(f for f in used if not os.path.isfile(f))
for f in missing:
    problems.append(("missing", f"{f} (named in {used[f]}) does not exist: {STALE_HINT}"))

last, last_desc = source_change()
if last is None:
    print(f"doc-samples: staleness check skipped: {last_desc}")
else:
    for f in sorted(set(used) - set(missing)):
        try:
            why = stale_reason(f, last, last_desc)
        except ValueError as e:
            why = f"{f} is not JSON ({e})"
        if why:
            problems.append(("stale", why))


def rewrite(text):
    def sample(m):
        return m.group(1) + render_sample(m.group(2)) + m.group(4)

    def prose(m):
        return m.group(1) + render_text(m.group(2)) + m.group(4)

    return TEXT.sub(prose, SAMPLE.sub(sample, text))


differ = 0
for p in marked:
    old = texts[p]
    try:
        new = rewrite(old)
    except Missing:
        continue  # already reported
    if new == old:
        continue
    if check:
        differ += 1
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), p, p + " (generated)"))
    else:
        tmp = p + ".tmp"
        open(tmp, "w").write(new)
        os.replace(tmp, p)
        print(f"doc-samples: rewrote {p}")

for kind, msg in problems:
    print(f"doc-samples: {msg}", file=sys.stderr)
fatal = [k for k, _ in problems if check or k != "stale"]
if differ:
    print(f"doc-samples: {differ} file(s) differ from what the binary and the reports give; run scripts/doc-samples.sh",
          file=sys.stderr)
if differ or fatal:
    sys.exit(1)
PY
