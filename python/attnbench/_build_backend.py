"""The package's PEP 517 build backend (pyproject.toml: build-backend = "_build_backend", backend-path =
["python/attnbench"]): setuptools' own (setuptools.build_meta), each hook run in a temporary copy of what the
package is made of (pyproject.toml, README.md, python/), so that `pip install .` writes nothing into the source
tree. Run in place, setuptools would put its build/ folder into CMake's build folder (build/lib, stale copies
included in later wheels) and an egg-info into python/.

It needs nothing beyond setuptools, so `pip install --no-build-isolation .` works offline with Debian's
python3-setuptools. An editable install (pip install -e .) runs setuptools in place: the tree itself is what gets
installed then. Not used at run time (shipped with the package only because it lives in its folder).
"""
import os
import shutil
import sys
import tempfile
import time

# This module runs in pip's hook process, started in the source tree: no bytecode is written there from now on,
# and the one file the import system wrote before this line (this module's own .pyc) is removed below.
sys.dont_write_bytecode = True

# What the package is built from (pyproject.toml's [project] and [tool.setuptools]), relative to the tree's root.
PROJECT_FILES = ("pyproject.toml", "README.md", "setup.cfg", "setup.py", "MANIFEST.in")
PROJECT_FOLDERS = ("python",)
LICENSE_PREFIXES = ("LICEN", "COPYING", "NOTICE", "AUTHORS")  # setuptools' default license-files


def _forget_own_bytecode():
    """Removes the .pyc the import system wrote for this module a moment ago (compiled and cached just before
    the module ran), and its __pycache__ folder when that is then empty. A .pyc older than this process's
    import stays: it was there before."""
    cached = getattr(globals().get("__spec__"), "cached", None)
    try:
        if not cached or time.time() - os.stat(cached).st_mtime > 10:
            return
        os.remove(cached)
        os.rmdir(os.path.dirname(cached))
    except OSError:
        pass


_forget_own_bytecode()


def _ignored(folder, names):
    return [n for n in names if n == "__pycache__" or n.endswith((".pyc", ".egg-info"))]


def _copy_project(root, into):
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if os.path.isfile(path) and (name in PROJECT_FILES or name.upper().startswith(LICENSE_PREFIXES)):
            shutil.copy2(path, os.path.join(into, name))
    for name in PROJECT_FOLDERS:
        shutil.copytree(os.path.join(root, name), os.path.join(into, name), ignore=_ignored)


def _in_copy(hook, *args, **kwargs):
    """setuptools.build_meta's `hook`, run in a fresh copy of the project (output folders made absolute first)."""
    import setuptools.build_meta as setuptools_backend
    root = os.getcwd()  # PEP 517: hooks run in the root of the source tree
    with tempfile.TemporaryDirectory(prefix="attnbench-build-") as tmp:
        _copy_project(root, tmp)
        os.chdir(tmp)
        try:
            return getattr(setuptools_backend, hook)(*args, **kwargs)
        finally:
            os.chdir(root)


def _in_place(hook, *args, **kwargs):
    import setuptools.build_meta as setuptools_backend
    return getattr(setuptools_backend, hook)(*args, **kwargs)


def _absolute(path):
    return None if path is None else os.path.abspath(path)


def get_requires_for_build_wheel(config_settings=None):
    return _in_copy("get_requires_for_build_wheel", config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _in_copy("prepare_metadata_for_build_wheel", _absolute(metadata_directory), config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _in_copy("build_wheel", _absolute(wheel_directory), config_settings, _absolute(metadata_directory))


def get_requires_for_build_sdist(config_settings=None):
    return _in_copy("get_requires_for_build_sdist", config_settings)


def build_sdist(sdist_directory, config_settings=None):
    return _in_copy("build_sdist", _absolute(sdist_directory), config_settings)


def get_requires_for_build_editable(config_settings=None):
    return _in_place("get_requires_for_build_editable", config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _in_place("prepare_metadata_for_build_editable", metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _in_place("build_editable", wheel_directory, config_settings, metadata_directory)
