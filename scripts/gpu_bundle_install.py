"""Install, offline, the bundled wheels whose modules this Python lacks (scripts/gpu_checks.sh, setup).

    python scripts/gpu_bundle_install.py WHEEL_DIR TARGET_DIR

``make gpu-bundle`` fills WHEEL_DIR (``.whl/``) with the wheels of perfreport's runtime
dependencies (typer, rich, numpy, openpyxl, orjson, msgspec and what they need) for the GPU
image's CPython 3.12. A wheel is installed into TARGET_DIR (``pip install --no-index --no-deps
--target``: no registry is contacted) only when one of its top-level modules cannot be imported
here, so the image's own torch, numpy and pandas are never shadowed. Prints one line per wheel;
exits 1 (with pip's message) when an install fails.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path


def top_level_modules(wheel: Path) -> list[str]:
    """Importable top-level names of a wheel: its first path parts, less metadata and data dirs."""
    names = set()
    with zipfile.ZipFile(wheel) as z:
        for n in z.namelist():
            head = n.split("/", 1)[0]
            if head.endswith((".dist-info", ".data")):
                continue
            if "/" in n:
                names.add(head)
            elif head.endswith(".py"):
                names.add(head[:-3])
            elif ".cpython-" in head or head.endswith((".so", ".pyd")):
                names.add(head.split(".", 1)[0])
    return sorted(x for x in names if x.isidentifier())


def missing(wheel: Path) -> list[str]:
    return [m for m in top_level_modules(wheel) if importlib.util.find_spec(m) is None]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.stderr.write("usage: gpu_bundle_install.py WHEEL_DIR TARGET_DIR\n")
        return 2
    wheels = sorted(Path(argv[0]).glob("*.whl"))
    todo = []
    for w in wheels:
        lack = missing(w)
        print(f"{w.name}: {'install (missing ' + ', '.join(lack) + ')' if lack else 'already importable'}")
        if lack:
            todo.append(str(w))
    if todo:
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
        r = subprocess.run(cmd + ["--no-cache-dir", "--upgrade", "--target", argv[1], *todo])
        if r.returncode:
            sys.stderr.write(f"gpu_bundle_install: pip failed (exit {r.returncode})\n")
            return 1
    print(f"{len(todo)} of {len(wheels)} wheels installed into {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
