"""pytest setup of the CLI tests (tests/cli/test_*.py): each runs the real attnbench binary in a scratch folder.
CTest runs one file per test through run_pytest.py, passing --attnbench (the binary) and --source-dir (the
repository); the helpers the tests share live in cli_helpers.py. A file whose every test was skipped (a tool
it needs is missing here) exits 77, which CTest reports as skipped, never as passed."""
import os
import pathlib

import pytest


def pytest_addoption(parser):
    parser.addoption("--attnbench", required=True, help="the attnbench binary under test")
    parser.addoption("--source-dir", required=True, help="the repository root")


@pytest.fixture(scope="session")
def attnbench(request):
    return os.path.abspath(request.config.getoption("--attnbench"))


@pytest.fixture(scope="session")
def src(request):
    return pathlib.Path(request.config.getoption("--source-dir")).resolve()


@pytest.fixture(scope="session")
def plugins(attnbench):
    """The folder of the test plugins built beside the binary (tests/plugins, examples/plugins)."""
    return pathlib.Path(attnbench).parent / "plugins"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A fresh scratch folder, made the working directory for one test."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def module_work(tmp_path_factory):
    """One scratch folder shared by the tests of a module (for files one test writes and the next reads); the
    tests still chdir into it through the `in_module_work` fixture."""
    return tmp_path_factory.mktemp("module")


@pytest.fixture
def in_module_work(module_work, monkeypatch):
    monkeypatch.chdir(module_work)
    return module_work


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    stats = reporter.stats
    ran = len(stats.get("passed", [])) + len(stats.get("failed", [])) + len(stats.get("error", []))
    if ran == 0 and stats.get("skipped"):
        session.exitstatus = 77  # every test skipped: a missing tool, reported as skipped by CTest
