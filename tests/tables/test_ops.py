"""Op sheets: category counts count the ops that launch kernels, not their wrappers."""

from __future__ import annotations

from tests.tables.test_attribution import K, X, _run, _rows


def _conv_call(t0, corr):
    # aten::conv2d -> convolution -> _convolution -> miopen_convolution, which launches one
    # kernel: one convolution, as the ROCm traces of issue 19 record it
    return [
        X("cpu_op", "aten::conv2d", t0, 100),
        X("cpu_op", "aten::convolution", t0 + 1, 98),
        X("cpu_op", "aten::_convolution", t0 + 2, 96),
        X("cpu_op", "aten::miopen_convolution", t0 + 3, 94),
        X("cuda_runtime", "hipExtModuleLaunchKernel", t0 + 10, 5, correlation=corr),
        K("igemm_fwd_gtcx3_nhwc_fp16", 10_000 + t0, 20, corr),
    ]


def test_category_count_is_the_launching_ops():
    # 3 calls: ops_summary lists 4 names x 3 calls = 12 op instances in the Conv category;
    # the category row counts the 3 that launched the kernels (60 µs of direct time)
    ev = []
    for i in range(3):
        ev += _conv_call(1000 * i, i + 1)
    _, sh = _run(ev)
    ops = _rows(sh["ops_summary"], "name")
    assert sum(r["count"] for r in ops.values()) == 12
    cats = {r["category"] for r in ops.values()}
    by = {r["category"]: r for r in sh["ops_summary_by_category"].records()}
    (c,) = cats
    assert by[c]["count"] == 3 and by[c]["direct kernel time (µs)"] == 60
