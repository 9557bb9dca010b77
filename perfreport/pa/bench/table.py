"""bench-pa's console table: fits 120 columns, one ``shape`` cell, no empty or meaningless columns.

Columns: shape (context, batch, query length, H_Q:H_KV, Dk/Dv, page), KV (dtype and layout),
backend, P (split-K partitions), median µs, p90/p10, TB/s, roof (% of the ideal roofline), impl
(% of the roofline of the bytes our kernel moves as implemented, partials included), rel err
(||out - ref|| / ||ref||, :mod:`perfreport.pa.bench.check`),
speedup (over the baseline), status. A column empty in every row is dropped; on the CPU the GPU-only figures (TB/s, the two
roofline percentages, speedup) are left out rather than printed as meaningless numbers. A row
whose p90/p10 exceeds 2 has status ``noisy``. Notes (skip reasons, adapter labels) follow the
table, one line each.
"""

from __future__ import annotations

GPU_ONLY = ("TB/s", "roof", "impl", "speedup")


def _ctx(n: int) -> str:
    for unit, m in (("M", 1024**2), ("K", 1024)):
        if n % m == 0:
            return f"{n // m}{unit}"
    return str(n)


def shape_of(r: dict) -> str:
    return (
        f"{_ctx(r['context'])} B{r['batch']} q{r['q_len']} {r['q_heads']}:{r['kv_heads']} "
        f"{r['head_dim']}/{r['v_head_dim']} p{r['page']}"
    )


def _num(v, nd: int = 1) -> str:
    if v is None or v == "":
        return ""
    return f"{v:,.{nd}f}"


def _pct(part, whole) -> str:
    if not part or not whole:
        return ""
    return f"{part / whole * 100:.0f}%"


def cells(r: dict) -> dict:
    kv = r["kv_dtype"] + ("" if r["layout"] == "NHD" else f" {r['layout']}")
    return {
        "shape": shape_of(r),
        "KV": kv,
        "backend": r["backend"],
        "P": str(r["partitions"] or ""),
        "median µs": _num(r["median_us"]),
        "p90/p10": _num(r.get("spread"), 2),
        "TB/s": _num(r["tb_s"], 2),
        "roof": _pct(r["roofline_us"], r["median_us"]),
        "impl": _pct(r.get("impl_roofline_us"), r["median_us"]),
        "rel err": f"{r['rel_l2']:.1e}" if r.get("rel_l2") is not None else "",
        "speedup": f"{r['speedup']:.1f}x" if r["speedup"] else "",
        "status": r["status"],
    }


HEADS = ["shape", "KV", "backend", "P", "median µs", "p90/p10", "TB/s", "roof", "impl", "rel err", "speedup", "status"]


TEXT_HEADS = ("shape", "KV", "backend", "status")  # left-aligned; the rest are numbers


def layout(res) -> tuple[str, list[str], list[dict]]:
    """(title, the columns shown, one cell dict per row): what any table of ``res`` prints
    (the CLI lays it out with perfreport.writers.fit_table; :func:`build_table` with rich)."""
    cpu = res.clock == "cpu" or res.device == "cpu"
    rows = [cells(r) for r in res.rows]
    heads = [h for h in HEADS if not (cpu and h in GPU_ONLY) and any(c[h] for c in rows)]
    title = (
        f"paged-attention decode on {res.device}"
        + (f", roofline: {res.arch}" if res.arch else "")
        + (" (CPU times)" if cpu else "")
    )
    return title, heads, rows


def build_table(res):
    from rich import box
    from rich.table import Table

    title, heads, rows = layout(res)
    t = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True, pad_edge=False)
    for h in heads:
        t.add_column(h, justify="left" if h in TEXT_HEADS else "right", no_wrap=True)
    for c in rows:
        t.add_row(*[c[h] for h in heads])
    return t


def notes_of(res) -> list[str]:
    out = [
        f"{r['backend']} {shape_of(r)} {r['kv_dtype']} {r['layout']}: {r['note']}" for r in res.rows if r.get("note")
    ]
    return out + [f"note: {n}" for n in res.notes]


def print_table(res, console) -> None:
    console.print(build_table(res))
    for line in notes_of(res):
        console.print(line, highlight=False, soft_wrap=True)


__all__ = ["TEXT_HEADS", "build_table", "cells", "layout", "notes_of", "print_table", "shape_of"]
