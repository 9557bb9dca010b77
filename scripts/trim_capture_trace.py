"""Trim a graph-capture trace to one capture region, for a small test fixture.

    python scripts/trim_capture_trace.py CAPTURE_DIR_OR_FILE OUT_DIR [--annotation capture_32_FULL]

Keeps the top-level metadata, the ``M`` metadata events, and every timed event (``X``,
flows) whose start lies inside the chosen ``user_annotation`` (by default the one named by
``execution_details.json``: ``capture_<batch_size>_<mode>``). Drops ``python_function``
frames and memory instants (``cpu_instant_event``): the report never reads them. Writes
``OUT_DIR/<same file name>`` and an ``execution_details.json`` naming only that capture.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

DROP_CATS = {"python_function", "cpu_instant_event"}


def _pick(src: Path, annotation: str | None) -> tuple[Path, str | None, dict | None]:
    if not src.is_dir():
        return src, annotation, None
    details = json.loads((src / "execution_details.json").read_text())
    for d in details:
        name = f"capture_{d['batch_size']}_{d['mode']}"
        if annotation in (None, name):
            return src / d["file"], name, d
    sys.exit(f"{src}: no capture named {annotation} in execution_details.json")


def trim(path: Path, annotation: str | None) -> tuple[dict, str]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    anns = [
        e
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") == "user_annotation"
        and (e["name"] == annotation if annotation else e["name"].startswith("capture_"))
    ]
    if len(anns) != 1:
        sys.exit(f"{path}: expected one annotation {annotation or 'capture_*'}, found {len(anns)}")
    a = anns[0]
    lo, hi = float(a["ts"]), float(a["ts"]) + float(a["dur"])
    kept = []
    for e in events:
        if e.get("ph") == "M":
            kept.append(e)
        elif e.get("cat") in DROP_CATS or e.get("ph") == "i":
            continue
        elif "ts" in e and lo <= float(e["ts"]) <= hi:
            kept.append(e)
    doc["traceEvents"] = kept
    return doc, a["name"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--annotation")
    ns = ap.parse_args(argv)
    path, annotation, detail = _pick(ns.src, ns.annotation)
    doc, name = trim(path, annotation)
    ns.out.mkdir(parents=True, exist_ok=True)
    dst = ns.out / path.name
    data = json.dumps(doc, separators=(",", ":")).encode()
    with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as out:
        out.write(data)
    if detail is not None:
        (ns.out / "execution_details.json").write_text(json.dumps([detail], indent=2) + "\n")
    print(f"{dst}: {len(doc['traceEvents'])} events inside {name}, {dst.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
