"""``perfreport archs``'s table of the built-in GPU specs (rich; kept out of
``writers/console.py``, whose report views import numpy and the tables: the command imports
the specs and rich only)."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

ARCHS_COLUMNS = (
    ("TB/s", None),
    ("fp64", "matrix_fp64"),
    ("fp32", "matrix_fp32"),
    ("tf32", "matrix_tf32"),
    ("bf16", "matrix_bf16"),
    ("fp16", "matrix_fp16"),
    ("fp8", "matrix_fp8"),
    ("fp6", "matrix_fp6"),
    ("fp4", "matrix_fp4"),
    ("LLC MiB", None),
    ("host GB/s", None),
)


def archs_table(specs) -> Table:
    """``perfreport archs``: one row per GPU (key, memory TB/s, the dense matrix peaks in
    TFLOP/s, last-level cache, host link per direction), so the table stays within 120
    columns however many GPUs there are; the full names and the other peaks (vector, MX,
    INT8) are in ``perfreport archs --json``."""
    kw = max((len(s.key) for s in specs), default=0)
    t = Table(
        title="GPU specs: memory TB/s, dense matrix peak TFLOP/s (blank: the part has no such path)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        header_style="bold",
        caption="\n".join(f"{s.key:<{kw}}  {s.name}" for s in specs)
        + "\nvector, INT8 and MX peaks, name patterns: perfreport archs --json",
        caption_justify="left",
    )
    t.add_column("key", no_wrap=True, min_width=kw)
    for head, _ in ARCHS_COLUMNS:
        t.add_column(head, justify="right", no_wrap=True, min_width=len(head))
    for s in specs:
        cells = []
        for head, peak in ARCHS_COLUMNS:
            if peak is not None:
                v = s.peaks.get(peak)
            elif head == "TB/s":
                v = s.mem_bw_tbps
            elif head == "LLC MiB":
                v = None if s.llc_bytes is None else round(s.llc_bytes / 2**20)
            else:
                v = s.host_link_gbps
            cells.append(Text("" if v is None else f"{v:g}"))
        t.add_row(Text(s.key), *cells)
    return t


__all__ = ["ARCHS_COLUMNS", "archs_table"]
