"""Cell-for-cell digests of every sheet perfreport writes for each committed fixture.

``python scripts/sheet_digests.py`` prints the digests as JSON; ``--update`` rewrites
``tests/data/sheet_digests.json``; ``tests/house/test_sheet_digests.py`` recomputes them and names
the fixture and sheet that changed. A change meant to alter figures updates the file in the
same commit and says why; a refactor leaves it byte-identical.

Each digest covers the workbook as written (every cell value of every sheet, read back with
openpyxl) and the CSV of every sheet, so a writer change shows up as well as a table change.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = ROOT / "tests" / "data" / "sheet_digests.json"

# (name, trace, extra analyze keyword arguments) -- paths relative to the repository root
CASES = [(p.name, f"fixtures/{p.name}", {}) for p in sorted((ROOT / "fixtures").glob("*.json.gz"))]
CASES += [
    (f"{d}/{p.name}", f"fixtures/{d}/{p.name}", {})
    for d in ("linking", "tree")
    for p in sorted((ROOT / "fixtures" / d).glob("*.json"))
]
CASES += [
    (
        "vllm_decode_graph+capture",
        "fixtures/vllm_decode_graph.json.gz",
        {"graph_capture": "fixtures/vllm_decode_capture"},
    ),
    (
        "sglang_tiny_graph+capture",
        "fixtures/sglang_tiny_graph.json.gz",
        {"graph_capture": "fixtures/sglang_tiny_capture"},
    ),
    ("serving_moe+config", "fixtures/serving_moe.json.gz", {"model_config": "fixtures/gpt_oss_20b_config.json"}),
]


def _cell(v) -> str:
    if isinstance(v, float):
        return repr(round(v, 9))
    return "" if v is None else str(v)


def digest_case(trace: str, kw: dict, analyze=None) -> dict[str, str]:
    """The digests of one case; ``analyze`` stands in for ``perfreport.analyze`` (the tests pass
    their run's shared one, tests/kit/cached.py), called from the repository root."""
    import openpyxl
    import os
    from perfreport.errors import BadInput

    if analyze is None:
        from perfreport import analyze

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        try:
            report = analyze(trace, **kw)
        except BadInput as e:
            return {"(refused)": hashlib.sha256(str(e).encode()).hexdigest()[:16]}
        out: dict[str, str] = {}
        with tempfile.TemporaryDirectory() as tmp:
            xlsx = Path(tmp) / "r.xlsx"
            report.to_excel(xlsx)
            wb = openpyxl.load_workbook(xlsx, read_only=True)
            for ws in wb.worksheets:
                h = hashlib.sha256()
                for row in ws.iter_rows(values_only=True):
                    h.update(("\x1f".join(_cell(v) for v in row) + "\n").encode())
                out[f"xlsx:{ws.title}"] = h.hexdigest()[:16]
            wb.close()
            for p in sorted(report.to_csv_dir(Path(tmp) / "csv")):
                out[f"csv:{p.name}"] = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
        return out
    finally:
        os.chdir(cwd)


def compute() -> dict[str, dict[str, str]]:
    return {name: digest_case(trace, kw) for name, trace, kw in CASES}


def main(argv: list[str]) -> int:
    got = compute()
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if "--update" in argv:
        DIGESTS.parent.mkdir(parents=True, exist_ok=True)
        DIGESTS.write_text(text)
        print(f"wrote {DIGESTS.relative_to(ROOT)} ({len(got)} cases)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
