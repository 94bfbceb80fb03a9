"""Kept for scripts that import it from scripts/: everything here is attnbench.rows in python/."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from attnbench.rows import *  # noqa: E402,F401,F403
