"""Writing a captured torch.profiler run as a fixture, shared by the capture_*_fixtures scripts.

The trace is exported, named, tagged with ``metadata``, and gzipped deterministically (no mtime,
no file name in the gzip header), through a temporary file renamed into place.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
from pathlib import Path


def write_profile(prof, path: Path, metadata: dict, edit=None) -> int:
    """Write ``prof`` (a finished ``torch.profiler.profile``) to ``path``; returns its size.

    ``edit(trace)``, when given, changes the exported trace dict in place before it is
    written (a script that splices events the CPU cannot record says so in its docstring)."""
    with tempfile.TemporaryDirectory() as td:
        raw = os.path.join(td, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw) as f:
            trace = json.load(f)
    if edit is not None:
        edit(trace)
    trace["traceName"] = path.name
    trace["metadata"] = metadata
    data = json.dumps(trace, separators=(",", ":")).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    os.replace(tmp, path)
    return path.stat().st_size


def capture_cpu(path: Path, script: str, run) -> int:
    """Run ``run()`` under a CPU ``torch.profiler`` with shapes recorded and write it to
    ``path`` with the usual metadata (``generator`` = ``scripts/<script>``, torch version)."""
    import torch  # only the capture scripts need torch; write_profile's callers may not

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        run()
    return write_profile(prof, path, {"generator": f"scripts/{script}", "torch": torch.__version__})


def fixture_main(argv, doc: str, name: str, capture) -> int:
    """Command line of a script that writes one fixture ``name``: ``--out DIR`` (default the
    repository's fixtures/), then ``capture(path)``; prints the size written."""
    import argparse

    import torch

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "fixtures"))
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    size = capture(Path(a.out) / name)
    print(f"{name}: {size} bytes", file=sys.stderr)
    return 0
