"""The house rules for imports, checked on the source (ast, nothing imported).

Stages, lowest first; a module may import its own stage and the stages below it, never a later one:

    base (errors, events, event_columns, event_fields, specs, stats) < read < tree < passes < models < tables < writers
    < report, pipeline < multi, diff < cli (and the package's __init__ / __main__)

``pa`` (bench-pa) stands beside the analyze stages: it may use base and ``models`` (the same
roofline perf model ``analyze`` uses), and only ``cli`` imports it. One named exception: passes read
what models *declare* (``models.registry``, ``models.backward``, ``models.dtypes``) to know which ops
need which ``perf_meta``; a model never imports a pass. No two modules import each other, directly
or through others.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "perfreport"

RANK = {
    "errors": 0, "events": 0, "event_columns": 0, "event_fields": 0, "specs": 0, "stats": 0,
    "read": 1, "tree": 2, "passes": 3, "models": 4, "tables": 5, "writers": 6,
    "report": 7, "pipeline": 7, "multi": 8, "diff": 8,
    "cli": 9, "__init__": 9, "__main__": 9,
}  # fmt: skip
PA_MAY_IMPORT = {"errors", "events", "specs", "stats", "models", "pa"}
DECLARATIONS = {"perfreport.models.registry", "perfreport.models.backward", "perfreport.models.dtypes"}


def _modules():
    for f in sorted(ROOT.rglob("*.py")):
        parts = f.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, f


def _imports(name: str, f: Path) -> tuple:
    """The perfreport modules ``f`` imports (parsed once per run: both checks below read them)."""
    return _parsed(name, f)


@functools.lru_cache(maxsize=None)
def _parsed(name: str, f: Path) -> tuple:
    return tuple(_walk(name, f))


def _walk(name: str, f: Path):
    pkg = name if f.name == "__init__.py" else name.rsplit(".", 1)[0]
    for n in ast.walk(ast.parse(f.read_text())):
        if isinstance(n, ast.Import):
            yield from (a.name for a in n.names if a.name.split(".")[0] == "perfreport")
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                base = ".".join(pkg.split(".")[: len(pkg.split(".")) - n.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "perfreport":
                continue
            # ``from pkg import name``: name may be a submodule; _known() falls back to pkg
            yield from (f"{base}.{a.name}" for a in n.names)


def _stage(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _known(mods, target):
    while target and target not in mods:
        target = target.rsplit(".", 1)[0] if "." in target else ""
    return target


def test_no_import_reaches_a_later_stage():
    bad = []
    for name, f in _modules():
        src = _stage(name)
        for tgt in _imports(name, f):
            dst = _stage(tgt)
            if dst in ("__version__",) or dst == src:
                continue
            if src == "pa":
                ok = dst in PA_MAY_IMPORT
            elif dst == "pa":
                ok = src == "cli"
            elif src == "passes" and any(tgt == d or tgt.startswith(d + ".") for d in DECLARATIONS):
                ok = True
            else:
                ok = RANK.get(dst, 0) <= RANK[src]
            if not ok:
                bad.append(f"{name} imports {tgt}")
    assert not bad, "imports against the stage order:\n" + "\n".join(bad)


def test_every_package_has_a_stage():
    stages = {_stage(n) for n, _ in _modules()}
    assert stages - set(RANK) - {"pa"} == set()


def test_no_import_cycle():
    mods = {n: f for n, f in _modules()}
    graph = {n: {_known(mods, t) for t in _imports(n, f)} - {"", n} for n, f in mods.items()}
    # only module-level imports make a cycle a load-order hazard, but a mutual dependency is a
    # design smell either way: count every import
    seen, stack, cycles = set(), [], []

    def visit(n, on):
        if n in on:
            cycles.append(stack[stack.index(n) :] + [n])
            return
        if n in seen:
            return
        seen.add(n)
        on.add(n)
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            # a package's __init__ importing its own submodules is not a cycle of design
            if m.startswith(n + ".") or n.startswith(m + "."):
                continue
            visit(m, on)
        stack.pop()
        on.discard(n)

    for n in sorted(graph):
        visit(n, set())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles[:10])
