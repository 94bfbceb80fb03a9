#!/usr/bin/env python3
"""Compares the SASS of every kernel instance of two builds (scripts/sass-compare.sh finds cuobjdump for it).

Each side is a build folder (every *.o under it that holds device code, matched by its path relative to the
folder) or one file (object, archive, executable, shared library, cubin, fatbin). `cuobjdump -sass` dumps each,
the dump is split per function (its mangled name) and per architecture, and normalized: instruction addresses,
the NOP padding after a function's end and the per-file hash nvcc gives anonymous namespaces are dropped;
instructions with their encodings (which hold the scheduling control bits) and each function's resource use
(`cuobjdump -res-usage`: registers, stack, shared, local, constant) are compared. One line per kernel instance:
identical, differs (instruction-count delta, resource changes), or only in one build.

    scripts/sass_compare.py --cuobjdump PATH BEFORE AFTER [--filter RE] [--kernel RE] [--diff N] [--demangle] [-j N]
                            [--rename RE=REPL ...] [--new-ok]

A kernel that gained a template argument in AFTER (a variant's instance beside the one without it) keeps its old
instance under a new name: --rename (a regex and its replacement, applied to AFTER's mangled names, in order)
names it as before, so that it is compared with its old SASS; --new-ok lets the instances only AFTER has (the
variant's own) pass.

Exit: 0 every instance identical; 1 some differ or are only in one build; 2 bad input (a missing path, a folder
against a file, no device code on either side, cuobjdump failing); 77 cuobjdump (or the nvdisasm it runs) missing.
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import shutil
import subprocess
import sys

SKIP, BAD = 77, 2

INSTR = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(.*?)\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
ENCODING = re.compile(r"^\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
FUNCTION = re.compile(r"^\s*Function\s*:?\s*(\S+?):?\s*$")
MEMBER = re.compile(r"^member\s+(.*):\s*$")
ARCH = re.compile(r"^arch\s*=\s*(\S+)")
ANON = re.compile(r"(\d+)_GLOBAL__N_")


class Bad(Exception):
    """Bad input or a failing cuobjdump: exit 2."""


def normalize_names(text):
    """Each anonymous namespace <len>_GLOBAL__N__<hash>_<n>_<file>_<hash> as 11_GLOBAL__N_ (the hash follows the
    file's contents), keeping the mangling well formed."""
    if "_GLOBAL__N_" not in text:
        return text
    out, pos = [], 0
    for m in ANON.finditer(text):
        if m.start() < pos:
            continue
        length = int(m.group(1))
        out.append(text[pos:m.start()])
        out.append("11_GLOBAL__N_")
        pos = m.start(1) + len(m.group(1)) + length
    out.append(text[pos:])
    return "".join(out)


class Function:
    def __init__(self):
        self.instrs = []  # [text, encoding words...] per instruction
        self.resources = ""

    def lines(self, encodings=True):
        body = self.instrs
        end = len(body)
        while end > 0 and body[end - 1][0].rstrip(" ;") == "NOP":  # alignment padding after the final branch
            end -= 1
        return [" ".join(i) if encodings else i[0] for i in body[:end]]

    def count(self):
        return len(self.lines(False))


def parse(text, target, on_function, on_resources):
    """Walks a cuobjdump listing; calls on_function(key) / on_resources(key, line) with key (member, arch, name)."""
    member, arch, in_elf, current = "", "", False, None
    pending = None
    for raw in text.splitlines():
        line = raw.strip()
        m = MEMBER.match(line)
        if m:
            member = m.group(1).split(":")[-1]  # "member ARCHIVE:OBJECT:"
            current = None
            continue
        if line.startswith("Fatbin elf code"):
            in_elf, current = True, None
            continue
        if line.startswith("Fatbin ptx code") or line.startswith("Fatbin"):
            in_elf, current = False, None
            continue
        m = ARCH.match(line)
        if m:
            arch = m.group(1)
            continue
        if line.startswith(".target"):  # a bare cubin has no fatbin header
            arch = line.split()[-1]
            in_elf = True
            continue
        m = FUNCTION.match(line)
        if m and (in_elf or target == "res"):
            key = (member, arch, normalize_names(m.group(1)))
            if target == "sass":
                current = on_function(key)
            else:
                pending = key
            continue
        if target == "res":
            if pending and ":" in line and line.startswith("REG"):
                on_resources(pending, line)
                pending = None
            continue
        if current is None:
            continue
        m = INSTR.match(raw)
        if m:
            current.instrs.append([normalize_names(" ".join(m.group(1).split())), m.group(2)])
            continue
        m = ENCODING.match(raw)
        if m and current.instrs:
            current.instrs[-1].append(m.group(1))


def run_cuobjdump(cuobjdump, flag, path):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(os.path.abspath(cuobjdump)) + os.pathsep + env.get("PATH", "")
    p = subprocess.run([cuobjdump, flag, path], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        err = p.stderr.strip()
        if "does not contain device code" in err or "no device code" in err.lower():
            return ""
        if "nvdisasm" in err:
            print(f"sass-compare: SKIPPED: {err}", file=sys.stderr)
            sys.exit(SKIP)
        raise Bad(f"cuobjdump {flag} {path} failed (exit {p.returncode}): {err}")
    return p.stdout


def dump(cuobjdump, path):
    """Every function of one file: {(member, arch, name[#n]): Function}."""
    functions, seen = {}, {}

    def unique(key):
        n = seen.get(key, 0) + 1
        seen[key] = n
        return key if n == 1 else (key[0], key[1], f"{key[2]}#{n}")

    def on_function(key):
        f = Function()
        functions[unique(key)] = f
        return f

    parse(run_cuobjdump(cuobjdump, "-sass", path), "sass", on_function, None)
    res_seen = {}

    def on_resources(key, line):
        n = res_seen.get(key, 0) + 1
        res_seen[key] = n
        k = key if n == 1 else (key[0], key[1], f"{key[2]}#{n}")
        if k in functions:
            functions[k].resources = " ".join(line.split())

    parse(run_cuobjdump(cuobjdump, "-res-usage", path), "res", None, on_resources)
    return functions


def objects(root, pattern):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".o"):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                if pattern is None or re.search(pattern, rel):
                    found.append(rel)
    return found


def collect(cuobjdump, root, pattern, jobs):
    """{(object, member, arch, name): Function} of a folder or a file."""
    if os.path.isdir(root):
        rels = objects(root, pattern)
        paths = [os.path.join(root, r) for r in rels]
    else:
        rels, paths = [""], [root]
    out = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for rel, functions in zip(rels, pool.map(lambda p: dump(cuobjdump, p), paths)):
            for (member, arch, name), f in functions.items():
                out[(rel, member, arch, name)] = f
    return out


def resource_change(a, b):
    fa = dict(x.split(":", 1) for x in a.split() if ":" in x)
    fb = dict(x.split(":", 1) for x in b.split() if ":" in x)
    return ", ".join(f"{k} {fa.get(k, '-')}->{fb.get(k, '-')}" for k in sorted(set(fa) | set(fb))
                     if fa.get(k) != fb.get(k))


def demangler(enabled):
    if not enabled or not shutil.which("c++filt"):
        return lambda names: names
    def run(names):
        p = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
        out = p.stdout.splitlines()
        return out if p.returncode == 0 and len(out) == len(names) else names
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--cuobjdump", default=os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump"))
    ap.add_argument("--filter", help="folders: only objects whose relative path matches this regex")
    ap.add_argument("--kernel", help="only functions whose mangled name matches this regex")
    ap.add_argument("--diff", type=int, default=0, metavar="N", help="print up to N lines of each differing SASS")
    ap.add_argument("--text-only", action="store_true", help="ignore encodings (control bits) and resource use")
    ap.add_argument("--demangle", action="store_true", help="print demangled names (c++filt)")
    ap.add_argument("--quiet", action="store_true", help="print only the instances that are not identical")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rename", action="append", default=[], metavar="RE=REPL",
                    help="rename AFTER's mangled names (re.sub, in order) before matching them with BEFORE's")
    ap.add_argument("--new-ok", action="store_true", help="instances only in AFTER do not fail the comparison")
    a = ap.parse_args()
    renames = []
    for r in a.rename:
        pattern, sep, repl = r.partition("=")
        try:
            if not sep or not pattern:
                raise re.error("no '='")
            renames.append((re.compile(pattern), repl))
        except re.error as e:
            print(f"sass-compare: --rename {r!r}: expected REGEX=REPLACEMENT ({e})", file=sys.stderr)
            return BAD

    if not a.cuobjdump or not os.path.isfile(a.cuobjdump) or not os.access(a.cuobjdump, os.X_OK):
        print("sass-compare: SKIPPED: no cuobjdump (scripts/fetch-cuobjdump.sh fetches one)", file=sys.stderr)
        return SKIP
    for p in (a.before, a.after):
        if not os.path.exists(p):
            print(f"sass-compare: {p}: no such file or folder", file=sys.stderr)
            return BAD
    if os.path.isdir(a.before) != os.path.isdir(a.after):
        print("sass-compare: compare a folder with a folder or a file with a file", file=sys.stderr)
        return BAD
    try:
        before = collect(a.cuobjdump, a.before, a.filter, a.jobs)
        after = collect(a.cuobjdump, a.after, a.filter, a.jobs)
        for pattern, repl in renames:
            renamed = {}
            for (obj, member, arch, name), f in after.items():
                key = (obj, member, arch, pattern.sub(repl, name))
                if key in renamed:
                    raise Bad(f"--rename {pattern.pattern!r} gives two instances the name {key[3]}")
                renamed[key] = f
            after = renamed
    except Bad as e:
        print(f"sass-compare: {e}", file=sys.stderr)
        return BAD
    if a.kernel:
        before = {k: v for k, v in before.items() if re.search(a.kernel, k[3])}
        after = {k: v for k, v in after.items() if re.search(a.kernel, k[3])}
    if not before and not after:
        print("sass-compare: no device code on either side", file=sys.stderr)
        return BAD

    keys = sorted(set(before) | set(after))
    shown = demangler(a.demangle)([k[3] for k in keys])
    counts = {"identical": 0, "differs": 0, "only-before": 0, "only-after": 0}
    print(f"{'status':<12} {'instrs':>7} {'delta':>6}  object  arch  kernel")
    for key, name in zip(keys, shown):
        obj = "/".join(x for x in (key[0], key[1]) if x) or os.path.basename(a.before)
        fb, fa = before.get(key), after.get(key)
        note, lines = "", None
        if fb is None or fa is None:
            status = "only-after" if fb is None else "only-before"
            n, delta = (fa or fb).count(), ""
        else:
            lb, la = fb.lines(not a.text_only), fa.lines(not a.text_only)
            n, delta = fb.count(), fa.count() - fb.count()
            res = "" if a.text_only else resource_change(fb.resources, fa.resources)
            status = "identical" if lb == la and not res else "differs"
            delta = f"{delta:+d}" if status == "differs" else ""
            if res:
                note = f"  ({res})"
            if status == "differs" and a.diff > 0:
                lines = list(difflib.unified_diff(lb, la, "before", "after", lineterm="", n=1))[: a.diff]
        counts[status] += 1
        if a.quiet and status == "identical":
            continue
        print(f"{status:<12} {n:>7} {delta:>6}  {obj}  {key[2]}  {name}{note}")
        for line in lines or []:
            print(f"    {line}")
    print(f"sass-compare: {len(keys)} kernel instances: {counts['identical']} identical, {counts['differs']} differ, "
          f"{counts['only-before']} only before, {counts['only-after']} only after")
    allowed = counts["identical"] + (counts["only-after"] if a.new_ok else 0)
    return 0 if allowed == len(keys) else 1


if __name__ == "__main__":
    sys.exit(main())
