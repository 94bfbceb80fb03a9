"""CTest's entry to one CLI test file: runs it under pytest, or exits 77 (skipped) when pytest is not
installed here (scripts/install-deps.sh installs python3-pytest). Usage:
    python3 run_pytest.py tests/cli/test_smoke.py --attnbench=BIN --source-dir=SRC [pytest args...]"""
import sys

sys.dont_write_bytecode = True  # the source tree stays clean: no __pycache__ beside the tests
try:
    import pytest
except ImportError:
    print("SKIPPED: pytest is not installed (scripts/install-deps.sh installs python3-pytest)")
    sys.exit(77)

sys.exit(int(pytest.main(["-q", "-p", "no:cacheprovider", "-rfEs", *sys.argv[1:]])))
