"""Kept for scripts that import it from scripts/ (gate_study.py): everything here is attnbench.rows in python/.
flat_rows(path) and flat_document(path) read a report with no binary (the older (binary, path) form still works);
ask_grid(find_binary(), args) asks the binary for a grid."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from attnbench.rows import *  # noqa: E402,F401,F403
