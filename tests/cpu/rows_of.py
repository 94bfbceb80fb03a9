#!/usr/bin/env python3
"""Prints one line per row of attnbench reports (problem JSON, strategy, status), sorted unless --ordered: the
rows' identity, for tests that compare which rows two runs produced (times always differ)."""
import json
import sys

ordered = "--ordered" in sys.argv
lines = []
for path in [a for a in sys.argv[1:] if a != "--ordered"]:
    with open(path) as f:
        doc = json.load(f)
    for r in doc["results"]:
        lines.append(json.dumps(r["problem"], sort_keys=True) + " " + r["strategy"] + " " + r["status"])
for line in (lines if ordered else sorted(lines)):
    print(line)
