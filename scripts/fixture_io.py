"""Writing a captured torch.profiler run as a fixture, shared by the capture_*_fixtures scripts.

The trace is exported, named, tagged with ``metadata``, and gzipped deterministically (no mtime,
no file name in the gzip header), through a temporary file renamed into place.
"""
from __future__ import annotations

import gzip
import json
import os
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
