"""The reader's typed columns: one row per kept event, no Python object per event.

``array.array`` columns (``ts``/``dur`` float64, names/categories/threads as small integer
codes, ids int64, interned ``args`` as an index): 45 bytes per CPU event, 49 per GPU event.
int64 columns hold :data:`~perfreport.events.NONE` for no value and
:data:`~perfreport.events.SIDE` for a value that is not an int64 (kept in the table's ``side``
dict); :meth:`_Table.value` reads either back.
"""

from __future__ import annotations

from array import array

from perfreport.events import NONE, column_value

# the int64 range a column holds as is (NONE and SIDE sit just below it)
INT64_LO, INT64_HI = NONE + 2, (1 << 63) - 1


class _Table:
    """Typed columns of one event kind; int64 columns use NONE / SIDE sentinels."""

    def __len__(self) -> int:
        return len(self.ts)

    def value(self, col: str, row: int):
        return column_value(self, col, row)


class CpuColumns(_Table):
    """CPU-side events (cpu_op, user_annotation, runtime/driver, python), one row each.

    ``cs`` holds the ``correlation`` of runtime/driver rows and the autograd ``Sequence
    number`` of the others; ``ext`` the ``External id``. Values that are not int64 are kept
    in ``side`` (``{(column, row): value}``) with :data:`SIDE` in the column.
    """

    def __init__(self) -> None:
        self.ts = array("d")
        self.dur = array("d")
        self.name = array("i")
        self.cat = array("b")
        self.thr = array("i")  # code into ``threads`` [(pid, tid)]
        self.ext = array("q")
        self.cs = array("q")
        self.args = array("i")  # index into ``args_table``, -1: none
        self.side: dict = {}


class GpuColumns(_Table):
    """GPU events (kernel, memcpy, memset), one row each, in reading order (row = uid)."""

    def __init__(self) -> None:
        self.ts = array("d")
        self.dur = array("d")
        self.name = array("i")
        self.cat = array("b")
        self.ds = array("i")  # code into ``devstreams`` [(device, stream)]
        self.corr = array("q")
        self.ext = array("q")
        self.nbytes = array("q")
        self.side: dict = {}


class Flows:
    """``ac2g`` flow points: id, location code (into ``Collector.locations``), ts."""

    def __init__(self) -> None:
        self.id = array("q")
        self.loc = array("i")
        self.ts = array("d")

    def __len__(self) -> int:
        return len(self.ts)


__all__ = ["CpuColumns", "GpuColumns", "Flows", "INT64_LO", "INT64_HI"]
