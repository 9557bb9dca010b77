"""perfreport diff on a terminal: one line per row at 80 and 120 columns, numbers whole."""

from pathlib import Path

import pytest
from rich.console import Console

from perfreport.diff import diff
from perfreport.writers.diff_console import print_diff_summary
from perfreport.writers.diff_console import diff_ops_table

FIX = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def report():
    # MI300X against H100, same model: long ROCm / CUDA kernel names on appeared/vanished rows
    return diff(str(FIX / "mi300_qwen_0.5b.json.gz"), str(FIX / "h100_qwen_0.5b.json.gz"))


@pytest.mark.parametrize("width", [80, 120, 200])
def test_rows_fit_on_one_line(report, width):
    con = Console(width=width, record=True, file=open("/dev/null", "w"))
    con.print(diff_ops_table(report, width, top=10))
    lines = con.export_text().splitlines()
    body = [ln for ln in lines[3:] if ln.strip()]  # title, header, rule
    assert len(body) == 10, "\n".join(lines)  # one line per row: nothing folded
    assert all(len(ln) <= width for ln in lines)
    # the SDPA row's figures (A 4,016 µs, B 2,723 µs, 1.48x faster on B) are printed whole
    sdpa = [ln for ln in body if "aten::_scaled" in ln]
    assert sdpa and "4.02 ms" in sdpa[0] and "2.72 ms" in sdpa[0] and "-1.29 ms" in sdpa[0]
    assert "1.48x" in sdpa[0]
    # the roofline columns are dropped before the name gets shorter than 28 characters
    assert ("roofline A→B" in lines[1]) == (width >= 120)


def test_summary_prints_the_short_table(report):
    con = Console(width=100, record=True, file=open("/dev/null", "w"))
    print_diff_summary(report, con, top=5)
    out = con.export_text()
    assert "(diff_ops)" in out and "A/B" in out and "appeared" in out
    # the timeline pair: MI300X computation 43.1 ms vs H100 45.6 ms (B slower: 0.94x)
    tl = [ln for ln in out.splitlines() if ln.startswith("2/0") and "computation" in ln]
    assert tl and "43.1 ms" in tl[0] and "45.6 ms" in tl[0] and "0.94x" in tl[0]
