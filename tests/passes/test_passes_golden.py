"""Passes are no-ops on traces without their leaf ops: reports are unchanged (golden check).

The passes that apply to every trace, "kernel element size" (the element width of ``aten::cat``
from its kernel's name) and "kernel math" (TF32 / FP32 / MX math from GEMM kernel names), run on
both sides, so the check covers all the others."""

from __future__ import annotations

import pytest

from perfreport.passes.kernel_element_size import element_size_from_kernels
from perfreport.passes.kernel_math import kernel_math
from perfreport.pipeline import load_tree
from perfreport.specs import detect_arch
from perfreport.tables import build_sheets
from tests.conftest import FIX


@pytest.mark.parametrize(
    "name",
    [
        "h100_qwen_0.5b",
        "mi300_qwen_0.5b",
        "mi210_gpu_only",
        "torch_compile_triton",
        "sglang_decode",
        "vllm_decode_graph",
    ],
)
def test_reports_identical_with_and_without_passes(name):
    import pandas as pd  # here, not at collection (0.5 CPU s a pytest-xdist worker)

    path = str(FIX / f"{name}.json.gz")
    with_p = load_tree(path)
    without = load_tree(path, passes=False)
    element_size_from_kernels(without)
    kernel_math(without)
    spec = detect_arch(with_p.meta.get("deviceProperties"))
    a = {s.name: s.df for s in build_sheets(with_p, spec=spec)}
    b = {s.name: s.df for s in build_sheets(without, spec=spec)}
    assert a.keys() == b.keys()
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k], check_exact=True, obj=k)


def test_user_models_file(tmp_path):
    """--models FILE.py registers a model for an op the package does not know (in a real process:
    a child forked from the server that has imported the command line, tests/cli/forked_cli.py)."""
    from tests.cli.forked_cli import run

    mf = tmp_path / "my_models.py"
    mf.write_text(
        "from perfreport.models.base import PerfModel, input_dims\n"
        "from perfreport.models.registry import register\n"
        "@register('aten::embedding')\n"
        "class Embedding(PerfModel):\n"
        "    category = 'Embedding_fwd'\n"
        "    def params(self):\n"
        "        return {'rows': input_dims(self.op, 1)[0] * input_dims(self.op, 1)[1], 'dim': input_dims(self.op, 0)[1]}\n"
        "    def flops(self):\n"
        "        return 0.0\n"
        "    def bytes(self):\n"
        "        p = self.params()\n"
        "        return 2.0 * 2 * p['rows'] * p['dim'] + 8 * p['rows']\n"
        "    def precision(self):\n"
        "        return 'bf16'\n"
    )
    r = run(
        "analyze", FIX / "h100_qwen_0.5b.json.gz", "--models", mf, "--sheet", "Embedding_fwd", "--format", "json", "-q"
    )
    assert r.returncode == 0, r.stderr.decode()
    import json

    rows = json.loads(r.stdout)["rows"]
    # embedding of a (16, 559) index tensor into a (151936, 1024) bf16 table:
    # rows = 8944; bytes = 2*2*8944*1024 (gather + write) + 8*8944 (int64 indices) = 36,706,176
    assert rows[0]["param: rows"] == 8944 and rows[0]["param: dim"] == 1024
    assert rows[0]["data moved (MB)"] == pytest.approx(36.706176)
    bad = tmp_path / "broken.py"
    bad.write_text("raise RuntimeError('boom')\n")
    r = run("analyze", FIX / "h100_qwen_0.5b.json.gz", "--models", bad, "-q")
    assert r.returncode == 2 and b"boom" in r.stderr and b"Traceback" not in r.stderr
