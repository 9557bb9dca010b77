"""The columns (perfreport/tables/columns.py): every column once with a constant named by the
convention, the value-named columns, the columns sheet, and no column name written as a literal
elsewhere. The schema's mechanism (Column, formats, the registry): tests/tables/test_column_schema.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import perfreport
from perfreport.tables import columns as C
from perfreport.writers.column_docs import columns_rows, describe
from perfreport.tables.sheet import Sheet

PKG = Path(perfreport.__file__).parent
# one-word lower-case names ("name", "count", "kernel", ...) and the diff's "A" / "B" are also
# trace-event keys, JSON keys and the console's row keys, so a literal of one is not a column
# reference; every other column name is distinctive and must come from the schema
GENERIC = re.compile(r"[a-z]+|[A-Z]")
DISTINCTIVE = {n for n in C.SCHEMA if not GENERIC.fullmatch(n)}
# the same words with another meaning: (module, literal) -> what it is there
NOT_COLUMNS = {
    ("diff/load.py", "GPU spec"): "the prefix of the report's spec notes",
    ("writers/summary.py", "GPU spec"): "the label of the spec facts",
    ("writers/summary.py", "compute spec"): "the console / HTML row key that reads that column",
    ("writers/console.py", "GPU"): "the header of the timeline table's device column",
}


def _literals(tree: ast.AST):
    """String constants that are not docstrings or parts of an f-string."""
    skip = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            skip.update(id(v) for v in ast.walk(n))
        body = getattr(n, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip:
            yield n


def column_literals(path: Path) -> list[tuple[int, str]]:
    """(line, column name) of every column-name literal in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.lineno, n.value) for n in _literals(tree) if n.value in DISTINCTIVE]


def test_no_module_but_the_schema_writes_a_column_name():
    found = {}
    for p in sorted(PKG.rglob("*.py")):
        if p == PKG / "tables" / "columns.py":
            continue
        rel = str(p.relative_to(PKG))
        hits = [(ln, v) for ln, v in column_literals(p) if (rel, v) not in NOT_COLUMNS]
        if hits:
            found[rel] = hits
    assert not found, f"use perfreport.tables.columns instead of these literals: {found}"


def test_the_scan_finds_a_literal(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('"""time sum (µs) in a docstring is prose."""\nrow = {"time sum (µs)": 1, f"x": 2}\n')
    assert column_literals(p) == [(2, "time sum (µs)")]


def test_constant_names_follow_the_convention():
    """The constant is the name upper-cased with its unit as a suffix (module docstring)."""

    def expected(name: str) -> str:
        s = name
        for a, b in (("(µs)", " US"), ("(ms)", " MS"), ("(%)", " PCT"), ("(MB)", " MB"), ("(B)", " B")):
            s = s.replace(a, b)
        s = s.replace("%", " PCT ").replace("/", " PER ")
        return re.sub(r"[^A-Za-z0-9]+", "_", s).strip("_").upper()

    consts = {v: k for k, v in vars(C).items() if k.isupper() and isinstance(v, str) and v in C.SCHEMA}
    assert set(consts) == set(C.SCHEMA), "every column has a constant"
    assert {n: consts[n] for n in C.SCHEMA if consts[n] != expected(n)} == {}


def test_value_named_columns():
    assert C.param("k") == "param: k" and describe(C.param("k")) == C.PREFIXES[C.PARAM_PREFIX]
    assert C.rank_time(3) == "rank 3 (µs)"
    assert C.rank_arrival(0) == "rank 0 arrival (µs)" and C.rank_call_time(0) == "rank 0 time (µs)"
    assert C.side_b(C.INPUT_DIMS) == C.INPUT_DIMS_B


def test_the_columns_sheet_reads_the_schema():
    sh = Sheet("s", [C.TIME_SUM_US, C.BUSBW_GB_PER_S, "made up (µs)"], [])
    rows = {r[0]: r for r in columns_rows([sh])}
    c = C.SCHEMA[C.TIME_SUM_US]
    assert rows[C.TIME_SUM_US] == [C.TIME_SUM_US, c.unit, c.meaning, c.source, "s"]
    assert rows[C.BUSBW_GB_PER_S][2] == "algbw × busbw factor"
    assert rows["made up (µs)"][1:3] == ["µs", "(no definition yet)"]
