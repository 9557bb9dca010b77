"""perfreport's records are msgspec Structs, not dataclasses, outside bench-pa (perfreport/pa/).

A dataclass is built by generating and compiling its methods' source when its module is
imported: ~1.2 ms a class here, ~0.02 CPU s over the ~25 classes every ``analyze`` imports; a
``msgspec.Struct`` class is made in C in ~0.04 ms (docs/benchmarks.md, "Session 27: records as
msgspec Structs"). bench-pa imports torch, whose start dwarfs them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "perfreport"


def dataclass_imports(source: str) -> list[int]:
    """Line numbers of ``import dataclasses`` / ``from dataclasses import ...`` in ``source``."""
    return [
        n.lineno
        for n in ast.walk(ast.parse(source))
        if (isinstance(n, ast.ImportFrom) and n.module == "dataclasses")
        or (isinstance(n, ast.Import) and any(a.name == "dataclasses" for a in n.names))
    ]


def test_no_module_outside_bench_pa_imports_dataclasses():
    found = [
        f"{p.relative_to(ROOT.parent)}:{line}"
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] != "pa"
        for line in dataclass_imports(p.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_check_finds_both_spellings():
    src = "import os\nfrom dataclasses import dataclass\n\ndef f():\n    import dataclasses\n"
    assert dataclass_imports(src) == [2, 5]
    assert dataclass_imports("import msgspec\nfrom msgspec import field\n") == []
