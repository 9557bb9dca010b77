"""bench-pa's table at 120 columns: one shape cell, no truncated cell, GPU-only columns off on CPU."""

from rich.console import Console

from perfreport.pa.bench.run import BenchResult
from perfreport.pa.bench.table import build_table, notes_of


def _row(**kw):
    r = dict(
        context=65536,
        batch=32,
        q_len=4,
        q_heads=16,
        kv_heads=1,
        head_dim=192,
        v_head_dim=128,
        page=64,
        kv_dtype="bf16",
        layout="NHD",
        backend="flashinfer",
        partitions="8",
        median_us=12345.6,
        p10_us=12000.0,
        p90_us=13000.0,
        spread=1.08,
        bytes=1.34e9,
        tb_s=4.35,
        roofline_us=280.0,
        impl_roofline_us=285.1,
        max_err=0.0123,
        rel_l2=0.00456,
        speedup=123.45,
        status="noisy",
        note="",
    )
    r.update(kw)
    return r


def _render(res, width=120):
    c = Console(width=width, record=True, color_system=None)
    c.print(build_table(res))
    return c.export_text()


def test_gpu_table_fits_120_columns_without_truncation():
    rows = [
        _row(),
        _row(kv_dtype="fp8", layout="5D", backend="triton", context=1048576),
        _row(
            status="skipped",
            median_us=None,
            p10_us=None,
            p90_us=None,
            spread=None,
            tb_s=None,
            roofline_us=None,
            impl_roofline_us=None,
            max_err=None,
            rel_l2=None,
            speedup=None,
            note="flydsl pa_decode_tile takes FP8 KV caches only",
        ),
    ]
    res = BenchResult(rows=rows, device="NVIDIA H200", arch="NVIDIA H200 SXM", clock="gpu-events")
    text = _render(res)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "64K B32 q4 16:1 192/128 p64" in text and "1M B32" in text
    for head in ("shape", "TB/s", "roof", "impl", "speedup", "p90/p10"):
        assert head in text
    assert "12,345.6" in text and "123.5x" in text and "fp8 5D" in text
    assert any("takes FP8 KV caches only" in n for n in notes_of(res))


def test_cpu_table_leaves_out_gpu_only_figures_and_empty_columns():
    rows = [_row(tb_s=0.0001, speedup=1.0, partitions="", status="ok")]
    res = BenchResult(rows=rows, device="cpu", arch="NVIDIA H200 SXM", clock="cpu")
    text = _render(res)
    assert "…" not in text and "(CPU times)" in text
    head_line = [ln for ln in text.splitlines() if "shape" in ln][0].split()
    for head in ("TB/s", "roof", "impl", "speedup", "P"):
        assert head not in head_line
    assert "median µs" in text and "rel err" in text and "4.6e-03" in text
