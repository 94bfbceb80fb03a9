#!/usr/bin/env python3
"""The PyTorch SDPA peer benchmark: a thin wrapper kept so that existing commands (device scripts, CI) keep working. The code is
attnbench.peer_torch in python/ (installed, it is the `attnbench-peer` console command); see its --help."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from attnbench.peer_torch import cli  # noqa: E402

if __name__ == "__main__":
    cli()
