"""`make demo` installs pyproject's base dependencies only; they are all `analyze` needs.

1. Every module perfreport imports outside pa/ and the bench-pa command (cli/bench_pa*.py) is
   the standard library, a base dependency, or an extra imported inside a function in the one file
   that uses it (ray: multi/engines.py, pandas: tables/sheet.py).
2. `perfreport analyze` (workbook, CSVs, HTML), `diff` of two reports and `archs` run with every
   extra's modules (torch, triton, ray, pandas, the test tools) made unimportable.
3. `make gpu-bundle`'s wheel list (GPU_WHEELS in the Makefile) is pyproject's dependencies.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "perfreport"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRA_MODULES = {"torch", "triton", "ray", "pandas", "pytest", "_pytest", "xdist", "filelock", "hypothesis", "ruff"}
LAZY_EXTRAS = {"ray": "multi/engines.py", "pandas": "tables/sheet.py"}


def _dist(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].strip().lower()


BASE = {_dist(r) for r in PYPROJECT["project"]["dependencies"]}


def _imports(path: Path):
    """(top-level module, imported at module level?) of every absolute import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            yield name.split(".")[0], id(node) in top


def test_base_dependencies_are_what_perfreport_imports_outside_bench_pa():
    assert BASE == {"typer", "rich", "numpy", "openpyxl", "orjson", "msgspec"}
    assert not BASE & EXTRA_MODULES
    seen, wrong = set(), []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(("pa/", "cli/bench_pa")):
            continue
        for mod, at_top in _imports(path):
            if mod == "perfreport" or mod in sys.stdlib_module_names:
                continue
            seen.add(mod)
            if mod in BASE or (LAZY_EXTRAS.get(mod) == rel and not at_top):
                continue
            wrong.append(f"{rel}: {mod}" + (" (module level)" if at_top else ""))
    assert wrong == [], "imports outside the base dependencies: " + ", ".join(wrong)
    assert seen == BASE | set(LAZY_EXTRAS)  # every base dependency is used


BLOCKED_RUN = r"""
import importlib.abc, sys
BLOCK = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None
sys.meta_path.insert(0, Block())
for mod in list(sys.modules):
    assert mod.split(".")[0] not in BLOCK, mod
from perfreport.cli.main import main
for argv in sys.argv[2:]:
    sys.argv = ["perfreport"] + argv.split("\x1f")
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    loaded = sorted({m.split(".")[0] for m in sys.modules} & BLOCK)
    assert not loaded, loaded
    print("ok", sys.argv[1])
"""


def test_analyze_diff_and_archs_run_without_the_extras(tmp_path):
    trace = ROOT / "fixtures" / "h100_qwen_0.5b.json.gz"
    xlsx, html, csv = tmp_path / "r.xlsx", tmp_path / "r.html", tmp_path / "csv"
    runs = [
        ["analyze", str(trace), "-o", str(xlsx), "--csv-dir", str(csv), "--html", str(html), "-q"],
        ["diff", str(xlsx), str(xlsx), "-q"],
        ["archs"],
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120")
    r = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN, ",".join(sorted(EXTRA_MODULES))] + ["\x1f".join(a) for a in runs],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("ok ")] == ["ok analyze", "ok diff", "ok archs"]
    assert xlsx.stat().st_size > 0 and html.stat().st_size > 0 and any(csv.glob("*.csv"))


def test_gpu_bundle_wheels_are_the_base_dependencies():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = re.search(r"^GPU_WHEELS := (.*)$", text, re.M).group(1)
    assert sorted(re.findall(r'"([^"]+)"', line)) == sorted(PYPROJECT["project"]["dependencies"])


def test_sheet_df_without_pandas_names_the_extra(monkeypatch):
    from perfreport.tables.sheet import Sheet

    sheet = Sheet("s", ["a"], [[1]])
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'perfreport\[pandas\]'"):
        sheet.to_pandas()
