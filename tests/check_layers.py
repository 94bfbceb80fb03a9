#!/usr/bin/env python3
"""The layer check: every `#include "LAYER/..."` in a source folder must name the folder itself or a layer it
declares as a dependency, directly or through others.

The layers and their dependencies are declared once, in the top-level CMakeLists.txt (attnbench_layer calls);
CMake writes them to LAYERS_FILE as lines `layer: dep dep ...`, where a layer is a folder under src/ (or
`kernels`, at the top). Usage:
    check_layers.py LAYERS_FILE SOURCE_DIR      check the tree; exit 1 and name each offending line
    check_layers.py --self-test                  show that the check catches an upward include
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h")


def read_layers(path):
    layers = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, deps = line.partition(":")
            layers[name.strip()] = deps.split()
    for name, deps in layers.items():
        for d in deps:
            if d not in layers:
                raise SystemExit(f"check_layers: {name} depends on {d}, which is not a declared layer")
    return layers


def reachable(layers):
    """Each layer with everything it may include: itself and its dependencies, transitively."""
    out = {}
    for name in layers:
        seen, todo = {name}, [name]
        while todo:
            for d in layers[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        out[name] = seen
    return out


def layer_folder(source_dir, layer):
    return os.path.join(source_dir, "src", layer) if layer != "kernels" else os.path.join(source_dir, "kernels")


def included_layer(target, layers):
    """The layer an include names ("backends/cuda/x.hpp" -> "backends/cuda"), or None for other headers."""
    parts = target.split("/")
    for n in (2, 1):
        if len(parts) > n and "/".join(parts[:n]) in layers:
            return "/".join(parts[:n])
    return None


def violations(layers, source_dir):
    allowed = reachable(layers)
    found = []
    for layer in layers:
        folder = layer_folder(source_dir, layer)
        if not os.path.isdir(folder):
            found.append(f"{folder}: declared layer {layer} has no folder")
            continue
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = included_layer(m.group(1), layers)
                        if target and target not in allowed[layer]:
                            found.append(f"{os.path.relpath(path, source_dir)}:{number}: layer {layer} includes "
                                         f"{m.group(1)} from layer {target}, which it does not depend on")
    # Every folder under src/ belongs to a layer, so a new folder cannot escape the check.
    src = os.path.join(source_dir, "src")
    for entry in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, entry)) and entry not in layers and not any(
                l.startswith(entry + "/") for l in layers):
            found.append(f"src/{entry}: folder is not a declared layer")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        for folder, text in {"src/core": '#include "core/a.hpp"\n', "src/cli": '#include "core/a.hpp"\n'}.items():
            os.makedirs(os.path.join(tmp, folder))
            with open(os.path.join(tmp, folder, "x.cpp"), "w", encoding="utf-8") as f:
                f.write(text)
        layers = {"core": [], "cli": ["core"]}
        assert violations(layers, tmp) == [], "a downward include was refused"
        with open(os.path.join(tmp, "src/core/y.hpp"), "w", encoding="utf-8") as f:
            f.write('// comment\n#include "cli/commands.hpp"\n')
        found = violations(layers, tmp)
        assert len(found) == 1 and "src/core/y.hpp:2" in found[0] and "layer core includes cli/" in found[0], found
        os.makedirs(os.path.join(tmp, "src/extra"))
        assert any("src/extra" in v for v in violations(layers, tmp)), "an undeclared folder passed"
    print("self-test passed: an upward include and an undeclared folder are caught")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    layers = read_layers(argv[1])
    found = violations(layers, argv[2])
    for v in found:
        print(v)
    print(f"{len(layers)} layers, {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
