#!/usr/bin/env python3
"""Does a run with a tuned cache reproduce the tuner's times: a thin wrapper kept so that existing commands (device scripts, CI) keep working. The code is
attnbench.tune_repro in python/ (installed, it is the `attnbench-tune-repro` console command); see its --help."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from attnbench.tune_repro import cli  # noqa: E402

if __name__ == "__main__":
    cli()
