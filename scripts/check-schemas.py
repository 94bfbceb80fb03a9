#!/usr/bin/env python3
"""Validates attnbench's JSON files against the published JSON Schemas (schemas/report.schema.json for
attnbench.report/1, schemas/cache.schema.json for attnbench.cache/1; draft 2020-12).

    scripts/check-schemas.py                   # every committed report and cache (docs/**, tests/data/**)
    scripts/check-schemas.py r.json cache.json # those too (a folder: its *.json, recursively)
    scripts/check-schemas.py --only r.json     # only the files named

Each file is checked against the schema its `schema` field names. A committed JSON file of another kind (a suite,
a tune summary) is skipped and named; a file named on the command line must be a report or a cache. Prints one
line per failure, `FILE: PATH.IN.DOCUMENT: what is wrong`, then a summary; exit 0 when every file validates, 1 on
any failure, 2 on bad usage or when python3-jsonschema (4.x, Debian's python3-jsonschema) is missing.
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
# The schemas beside the scripts: ../schemas in the source tree and in an install (share/attnbench/{scripts,schemas}).
SCHEMA_DIR = os.path.join(ROOT, "schemas")
SCHEMA_FILES = {"attnbench.report/1": "report.schema.json", "attnbench.cache/1": "cache.schema.json"}
# Folders whose JSON files are checked by default: docs/results, docs/perf-log/data, ... and the tests' data.
COMMITTED = ("docs", "tests/data")
MAX_MESSAGE = 240


def validators(schema_dir):
    import jsonschema  # Debian: python3-jsonschema
    out = {}
    for tag, name in SCHEMA_FILES.items():
        path = os.path.join(schema_dir, name)
        with open(path) as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        out[tag] = cls(schema)
    return out


def where(error):
    """results[3].problem.causal: the document path of a validation error ('(document)' at the top)."""
    text = ""
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


def short(message):
    message = " ".join(message.split())
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 3] + "..."


def describe(error):
    if error.schema is False:  # a field the row's status rules out (the time of an unsupported row)
        return "not allowed here (the schema rules this field out for this row's status)"
    return short(error.message)


def check_file(path, checkers, named, shown=None):
    """(kind, failures): kind is the schema tag, or None for a file that is neither a report nor a cache. `shown`:
    the name the failure lines give the file (default: its path)."""
    real, path = path, shown or path
    try:
        with open(real, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        return "?", [f"{path}: cannot read ({e.strerror})"]
    except ValueError as e:
        return "?", [f"{path}: not JSON ({e})"]
    tag = doc.get("schema") if isinstance(doc, dict) else None
    if tag not in checkers:
        if named:
            return "?", [f"{path}: not an attnbench report or cache (schema is {tag!r})"]
        return None, []
    errors = sorted(checkers[tag].iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    return tag, [f"{path}: {where(e)}: {describe(e)}" for e in errors]


def json_files(folder):
    return sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("files", nargs="*", help="reports or caches (or folders of them) to check as well")
    ap.add_argument("--only", action="store_true", help="check only the files named, not the committed ones")
    ap.add_argument("--root", default=ROOT, help="the source tree whose committed files are checked (default: %(default)s)")
    ap.add_argument("--schemas", default=SCHEMA_DIR, help="the folder of the schemas (default: %(default)s)")
    a = ap.parse_args(argv)
    if a.only and not a.files:
        ap.error("--only needs files to check")
    try:
        checkers = validators(a.schemas)
    except ImportError:
        print("check-schemas: python3-jsonschema is not installed (apt-get install python3-jsonschema)", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"check-schemas: cannot load the schemas from {a.schemas}: {e}", file=sys.stderr)
        return 2

    todo = []  # (path, the name it is shown by, named on the command line)
    if not a.only:
        for folder in COMMITTED:  # shown relative to the tree: docs/results/x.json
            todo += [(p, os.path.relpath(p, a.root), False) for p in json_files(os.path.join(a.root, folder))]
    for f in a.files:
        if os.path.isdir(f):
            todo += [(p, p, False) for p in json_files(f)]
        else:
            todo.append((f, f, True))

    failures, counts, skipped = [], {tag: 0 for tag in checkers}, []
    for path, shown, named in todo:
        kind, bad = check_file(path, checkers, named, shown)
        failures += bad
        if kind is None:
            skipped.append(shown)
        elif kind in counts and not bad:
            counts[kind] += 1
    for line in failures:
        print(line)
    summary = ", ".join(f"{n} {tag.split('/')[0].split('.')[1]}(s) valid" for tag, n in counts.items())
    print(f"check-schemas: {summary}; {len(failures)} failure(s)"
          + (f"; skipped (neither a report nor a cache): {', '.join(skipped)}" if skipped else ""),
          file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
