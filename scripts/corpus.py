"""Run the public-trace corpus (fixtures/corpus/MANIFEST.json) through perfreport and check each trace.

    python scripts/corpus.py                       # the committed traces (fixtures/corpus/)
    python scripts/corpus.py --raw DIR             # also the larger ones, from DIR/<id with / as __>[.gz]
    python scripts/corpus.py --raw DIR --markdown docs/corpus.md

Checks per trace (:func:`check`; ``tests/traces/test_corpus.py`` runs it on every committed trace):

* exit: the report is built, or the refusal is the one the manifest documents (``refusal``);
* GPU: a spec was detected, or the report names the devices it saw (or says there are none) and
  says to pass ``--arch``;
* kernels kept = kernels in the raw file: the GPU events (kernel, memcpy, memset and their older /
  MTIA spellings, docs/formats.md) counted straight from the JSON, exact repeats counted once (the
  reader's de-duplication rule, perfreport/tree/dedup.py), equal the kernel_summary's count;
* conservation: the coverage parts add up to its total, and the unified sheet's time to the
  kernel_summary's (the report's own conservation check raises otherwise);
* no row above 100% of its roofline without a cause that covers it: every unified row whose mean
  is above 100% is either "model inputs suspect" (and counted under that reason, not modelled),
  or names a cause that this script checks again from the row's own cells (:func:`covered`):
  operands that fit in the last-level cache (data moved per call <= the spec's LLC, not a host
  copy, and the compute term GFLOP / peak within the fastest instance's time), an assumption's
  lower bound within 100% (``roofline % min``), an attention row's unknown window, or
  overlap with other streams that covers the excess (the flag states both times);
* no "model inputs suspect" row counted as modelled (its ``coverage`` cell is not "modelled").
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "fixtures" / "corpus"
MANIFEST = CORPUS / "MANIFEST.json"
SUSPECT = "model inputs suspect"
REL = 1e-6


def manifest() -> list[dict]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["traces"]


def _load_json(data: bytes):
    """``json.loads(data)``: msgspec's decode (the same values where it reads the text: big integers
    as integers, the last of duplicate keys; ~5x faster on a large trace), else json's (it reads
    what msgspec refuses: NaN, Infinity, lone surrogates, a BOM, numbers out of a double's range)."""
    import msgspec

    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        return json.loads(data)


def raw_gpu_events(path: Path) -> tuple[int, int]:
    """(GPU events in the file, distinct GPU events) counted from the raw JSON."""
    from perfreport.read.schema import CAT_ALIASES, GPU_CATS

    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = _load_json(data)
    evs = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    gpu = set(GPU_CATS) | {k for k, v in CAT_ALIASES.items() if v in GPU_CATS}
    n, seen = 0, set()
    for e in evs:
        if not isinstance(e, dict) or e.get("ph") != "X" or e.get("cat") not in gpu:
            continue
        n += 1
        a = e.get("args") or {}
        ext = a.get("External id", a.get("external id"))
        seen.add(
            (
                CAT_ALIASES.get(e["cat"], e["cat"]),
                e.get("name"),
                a.get("device", e.get("pid")),
                a.get("stream", e.get("tid")),
                e.get("ts"),
                e.get("dur"),
                a.get("correlation"),
                ext,
            )
        )
    return n, len(seen)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(REL * max(abs(a), abs(b)), 1e-6)


def covered(row: dict, spec) -> bool:
    """True when one of the causes the row's ``above roofline`` flag names covers the excess,
    checked from the row's cells (see the module docstring), independently of the flag's code."""
    flags = row.get("flags") or ""
    flag = next((f for f in flags.split(" | ") if f.startswith("above roofline")), "")
    if "likely" not in flag:
        return False
    cat = row.get("category") or ""
    if "sliding window, sparsity or KV-cache reuse" in flag and ("attention" in cat.lower() or cat.startswith("SDPA")):
        return True
    lo = row.get("roofline % min")
    if "at the assumption's lower bound" in flag and "still" not in flag and lo is not None and lo <= 100.0:
        return True
    if "enough to cover the" in flag:  # "<a> of <b> µs) ran while ... enough to cover the <c> µs"
        over = float(flag.split("% of the above-roofline time (", 1)[1].split(" of ", 1)[0].replace(",", ""))
        excess = float(flag.split("enough to cover the ", 1)[1].split(" µs", 1)[0].replace(",", ""))
        if over >= excess:
            return True
    if "hits beat the HBM roofline" in flag and spec is not None and spec.llc_bytes:
        peak = spec.peaks.get(row.get("compute spec") or "")
        t_min = row.get("time min (µs)") or 0.0
        fits = (row.get("data moved (MB)") or 0.0) * 1e6 <= spec.llc_bytes and row.get("bound") != "host link"
        t_c = (row.get("GFLOP") or 0.0) * 1e9 / (peak * 1e12) * 1e6 if peak else 0.0
        if fits and t_min > 0 and t_c <= t_min * (1 + REL):
            return True
    return False


def check(path: Path, refusal: str | None = None, analyze=None) -> dict:
    """Analyze ``path`` and check it (see the module docstring); ``problems`` lists what failed.
    ``analyze`` stands in for ``perfreport.analyze`` (the tests pass their run's shared one,
    tests/kit/cached.py)."""
    import perfreport

    analyze = analyze or perfreport.analyze
    out: dict = {"problems": []}
    p = out["problems"]
    t0 = time.perf_counter()
    try:
        r = analyze(path)
    except perfreport.BadInput as exc:
        out.update(exit="refused", message=str(exc), seconds=time.perf_counter() - t0)
        if not refusal or refusal not in str(exc):
            p.append(f"refused: {exc}")
        return out
    out["seconds"] = time.perf_counter() - t0
    out["exit"] = "ok"
    if refusal:
        p.append(f"expected the refusal {refusal!r}, got a report")
    # GPU
    arch = next((n for n in r.notes if n.startswith("GPU spec:")), "")
    if r.spec is not None:
        out["gpu"] = r.spec.name
    else:
        out["gpu"] = "none: " + (arch.split("(", 1)[1].split(")", 1)[0] if "(" in arch else arch)
        if "--arch" not in arch:
            p.append(f"no GPU spec and the report does not say to pass --arch: {arch!r}")
    # kernels
    raw, distinct = raw_gpu_events(path)
    out["raw GPU events"] = raw
    kept = 0
    if "kernel_summary" in r.sheet_names:
        kept = int(sum(x["count"] for x in r.sheet("kernel_summary").records()))
    out["kept"] = kept
    if kept != distinct:
        p.append(f"kernels kept {kept} != kernels in the raw file {distinct} ({raw} with repeats)")
    # conservation
    cov = r.coverage
    if cov is not None:
        out["modelled %"] = cov.modelled_pct
        out["suspect %"] = cov.pct(cov.unmodelled_us.get(SUSPECT, 0.0))
        if not _close(cov.parts_us, cov.total_us):
            p.append(f"coverage parts {cov.parts_us} != total {cov.total_us}")
        if r.has_gpu and "kernel_summary" in r.sheet_names:
            u = sum(x["time sum (µs)"] or 0 for x in r.sheet("unified_perf_summary").records())
            k = sum(x["sum (µs)"] or 0 for x in r.sheet("kernel_summary").records())
            if not _close(u, k):
                p.append(f"unified time {u} != kernel_summary time {k}")
    # rows above 100%
    above = uncaused = suspect_modelled = 0
    for row in r.sheet("unified_perf_summary").records() if "unified_perf_summary" in r.sheet_names else []:
        flags = row.get("flags") or ""
        if SUSPECT in flags and row.get("coverage") == "modelled":
            suspect_modelled += 1
        m = row.get("roofline mean (%)")
        if m is None or m <= 100:
            continue
        above += 1
        if SUSPECT in flags:  # counted apart from modelled (checked above)
            continue
        if not covered(row, r.spec):
            uncaused += 1
    out.update({"rows >100%": above, "uncaused >100%": uncaused, "suspect counted modelled": suspect_modelled})
    if uncaused:
        p.append(f"{uncaused} rows above 100% of roofline without a cause that covers it")
    if suspect_modelled:
        p.append(f"{suspect_modelled} '{SUSPECT}' rows counted as modelled")
    return out


def local_path(entry: dict, raw_dir: Path | None) -> Path | None:
    if entry.get("fixture"):
        return CORPUS / entry["fixture"]
    if raw_dir is None:
        return None
    stem = entry["id"].replace("/", "__")
    for cand in (raw_dir / stem, raw_dir / f"{stem}.gz", raw_dir / f"{stem}.json", raw_dir / f"{stem}.json.gz"):
        if cand.exists():
            return cand
    return None


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.1f}"
    return str(v).replace("|", "/")


COLS = (
    "id",
    "where",
    "exit",
    "gpu",
    "raw GPU events",
    "kept",
    "modelled %",
    "suspect %",
    "rows >100%",
    "uncaused >100%",
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", type=Path, help="directory of the traces not committed (named by manifest id)")
    ap.add_argument("--markdown", type=Path, help="also write the table here (docs/corpus.md's results section)")
    ap.add_argument("--only", help="run only ids containing this text")
    a = ap.parse_args(argv)
    rows, failed, missing = [], 0, []
    for e in manifest():
        if a.only and a.only not in e["id"]:
            continue
        path = local_path(e, a.raw)
        if path is None:
            missing.append(e["id"])
            continue
        res = check(path, e.get("refusal"))
        res.update(id=e["id"], where="fixture" if e.get("fixture") else "script")
        rows.append(res)
        failed += bool(res["problems"])
        print(f"{e['id']}: {res['exit']} {'; '.join(res['problems']) or 'all checks pass'}", file=sys.stderr)
    lines = ["| " + " | ".join(COLS + ("problems",)) + " |", "|" + "---|" * (len(COLS) + 1)]
    for res in rows:
        lines.append(
            "| " + " | ".join(_fmt(res.get(c)) for c in COLS) + " | " + _fmt("; ".join(res["problems"])) + " |"
        )
    table = "\n".join(lines)
    print(table)
    print(f"\n{len(rows)} traces run, {failed} with problems, {len(missing)} not found locally", file=sys.stderr)
    if a.markdown:
        a.markdown.write_text(table + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
