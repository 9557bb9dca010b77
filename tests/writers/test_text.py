"""CSV text built column by column (perfreport/writers/text.py) is the csv module's writer's, byte
for byte, on every kind of value a sheet holds (and on ragged or one-column sheets)."""

from __future__ import annotations

import csv
import io

import numpy as np

from perfreport.tables.sheet import Sheet
from perfreport.writers.cells import csv_field, rows
from perfreport.writers.text import _quoted, csv_text

HOSTILE = ["", "a", "a,b", 'say "hi"', 'q",', "=1+2", "-x", " lead", "tab\there", "cr\rlf\n", "µs, …", "x\u202ey"]


def _by_csv_module(sheet) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_field(str(c)) for c in sheet.columns])
    w.writerows([csv_field(v) if isinstance(v, str) else v for v in r] for r in rows(sheet))
    return buf.getvalue()


def test_quoted_as_the_csv_module():
    for s in HOSTILE + ['"', ",", '""', "\n", "\r"]:
        b = io.StringIO()
        csv.writer(b, lineterminator="\n").writerow([s, ""])
        assert _quoted(s) == b.getvalue()[:-2], s


def test_columns_of_every_kind():
    n = len(HOSTILE)
    cols = {
        "text": HOSTILE,
        "float": [0.1 + 0.2, 1e-7, -0.0, 2.5e300, 1.0, 3.0, 1 / 3, 7.0, 8.5, 9.25, 1e16, 123456.789],
        "int": list(range(-5, n - 5)),
        "np float": list(np.arange(n, dtype=np.float64) / 7),
        "np int": list(np.arange(n, dtype=np.int64) * 10**12),
        "mixed": [None, 1, 2.5, True, "t,x", np.float32(0.5), float("nan"), float("inf"), (1, 2), "", False, -3],
        "none": [None] * n,
        "bool": [True, False] * (n // 2),
    }
    sheet = Sheet("s", list(cols), [list(r) for r in zip(*cols.values())])
    assert csv_text(sheet) == _by_csv_module(sheet)
    assert csv_text(sheet).splitlines()[1] == ",0.30000000000000004,-5,0.0,0,,,True"  # an empty text: no field


def test_ragged_one_column_and_empty_sheets():
    ragged = Sheet("r", ["a", "b", "c"], [[1, "x,y"], [2.5, None, "z", "extra"], []])
    one = Sheet("o", ["only"], [[""], ["a,b"], [None]])
    empty = Sheet("e", ["a", "b"], [])
    for sh in (ragged, one, empty):
        assert csv_text(sh) == _by_csv_module(sh), sh.name
    assert csv_text(one) == 'only\n""\n"a,b"\n""\n'  # a lone empty field is quoted by the csv module
