"""pa/kernel/host.py: the host wrapper's workspace, SM count and partition plan, and the argument
checks that refuse a call before anything is launched (one ValueError line each). Launches
through the interpreter: tests/pa/kernel/test_partition_kernel.py."""

from __future__ import annotations

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before the kernels are defined (see test_partition_kernel.py)

from perfreport.pa.kernel.cache import build_inputs  # noqa: E402
from perfreport.pa.kernel.host import auto_partitions, make_workspace, paged_attention_decode, sm_count  # noqa: E402
from perfreport.pa.kernel.partitions import plan_partitions  # noqa: E402

CPU = torch.device("cpu")


def test_workspace_shapes_and_dtypes():
    ws = make_workspace(2, 4, 8, 128, 3, CPU)
    assert ws.max_logits.shape == ws.exp_sums.shape == (2, 4, 3, 8) and ws.tmp_out.shape == (2, 4, 3, 8, 128)
    assert ws.num_partitions == 3 and ws.tmp_out.dtype == torch.float32
    assert make_workspace(1, 1, 16, 64, 2, CPU, "bf16").tmp_out.dtype == torch.bfloat16


def test_cpu_counts_8_sms_for_the_plan():
    assert sm_count(CPU) == 8
    assert auto_partitions(2, 1, 100, 64, CPU) == plan_partitions(2, 100, 64, 8)


def _inp(**kw):
    return build_inputs([40, 24], q_len=1, q_heads=4, kv_heads=2, head_dim=32, v_head_dim=32, page_size=16, **kw)


def _call(inp, **kw):
    args = dict(scale=inp.scale, q_len=inp.q_len, layout=inp.layout)
    args.update(kw)
    q = args.pop("query", inp.query)
    return paged_attention_decode(q, inp.key_cache, inp.value_cache, inp.block_tables, inp.context_lens, **args)


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"q_len": 0}, "q_len must be a positive integer, got 0"),
        ({"fp8_mma": "fp16"}, "fp8_mma must be 'f16' or 'fp8', got 'fp16'"),
        ({"partials": "fp16"}, "partials must be 'fp32' or 'bf16', got 'fp16'"),
        ({"block_n": 48}, "block_n must be 16, 32, 64 or 128, got 48"),
        ({"num_stages": 9}, r"num_stages must be an integer in \[1, 6\], got 9"),
        ({"layout": "HND"}, "unknown KV layout 'HND'"),
        ({"q_len": 3}, r"query rows \(2\) are not a multiple of q_len \(3\)"),
    ],
)
def test_refusals_before_any_launch(kw, msg):
    with pytest.raises(ValueError, match=msg):
        _call(_inp(), **kw)


def test_query_refusals():
    inp = _inp()
    with pytest.raises(ValueError, match="query must be bfloat16, got torch.float32"):
        _call(inp, query=inp.query.float())
    with pytest.raises(ValueError, match="query must be 3-D"):
        _call(inp, query=inp.query[0])
    with pytest.raises(ValueError, match=r"query head dim 16 does not match the K cache head dim 32"):
        _call(inp, query=inp.query[..., :16].contiguous())
