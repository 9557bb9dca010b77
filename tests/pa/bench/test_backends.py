"""Vendor adapters against fake vendor modules (no vendor package or GPU needed): what each one
plans, skips and labels."""

import sys
import types

import pytest
import torch

from perfreport.pa.bench.backends import SkipRow

from perfreport.pa.bench.backends import flashinfer_backend

from perfreport.pa.bench.backends import flydsl_backend

from perfreport.pa.bench.backends import vllm_backend
from perfreport.pa.kernel.reference import paged_attention_ref
from tests.pa.bench.backends.kit import GPU
from tests.pa.bench.backends.kit import case_and_inputs as _case
from tests.kit.tensors import assert_close


def _ref(inp):
    return paged_attention_ref(
        inp.query,
        inp.key_cache,
        inp.value_cache,
        inp.block_tables,
        inp.context_lens,
        fp8_dtype=inp.fp8_dtype,
        **inp.kwargs(),
    )


def _module(monkeypatch, name, **attrs):
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    monkeypatch.setitem(sys.modules, name, mod)
    return mod


@pytest.fixture
def fake_flydsl(monkeypatch):
    calls = []

    def pa_decode_tile(
        output,
        query,
        key_cache,
        value_cache,
        block_tables,
        context_lengths,
        softmax_scale,
        key_scale,
        value_scale,
        query_length,
    ):
        calls.append(key_cache.shape)
        output.copy_(
            paged_attention_ref(
                query,
                key_cache,
                value_cache,
                block_tables,
                context_lengths,
                scale=softmax_scale,
                k_scale=key_scale,
                v_scale=value_scale,
                q_len=query_length,
                layout="5D",
            )
        )

    _module(monkeypatch, "flydsl")
    _module(monkeypatch, "kernels")
    _module(monkeypatch, "kernels.attention")
    _module(monkeypatch, "kernels.attention.pa_decode_tile", pa_decode_tile=pa_decode_tile)
    monkeypatch.setattr(torch.version, "hip", "6.4")
    return calls


def test_flydsl_skips_bf16_rows_with_the_reason(fake_flydsl):
    c, inp = _case(kv_dtype="bf16")
    with pytest.raises(SkipRow, match="FP8 KV caches only"):
        flydsl_backend.prepare(inp, c, GPU)


def test_flydsl_fp8_runs_on_5d_caches(fake_flydsl):
    c, inp = _case(kv_dtype="fp8")
    prep = flydsl_backend.prepare(inp, c, GPU)
    out = prep.run()
    assert len(fake_flydsl[0]) == 5  # the NHD cache was converted to 5D once
    assert_close(out.float(), _ref(inp).float(), atol=2e-2, rtol=0)


def test_vllm_labels_one_token_per_program_at_q_len_over_1(monkeypatch):
    seen = {}

    def unified_attention(
        q,
        k,
        v,
        out,
        cu_seqlens_q,
        max_seqlen_q,
        seqused_k,
        max_seqlen_k,
        softmax_scale,
        causal,
        window_size,
        block_table,
        softcap,
        q_descale,
        k_descale,
        v_descale,
    ):
        seen.update(max_seqlen_q=max_seqlen_q, causal=causal)
        out.zero_()

    _module(monkeypatch, "vllm")
    _module(monkeypatch, "vllm.attention")
    _module(monkeypatch, "vllm.attention.ops")
    _module(monkeypatch, "vllm.attention.ops.triton_unified_attention", unified_attention=unified_attention)
    c4, inp4 = _case(q_len=4)
    prep = vllm_backend.prepare(inp4, c4, GPU)
    prep.run()
    assert "one token per program" in prep.note and seen == dict(max_seqlen_q=4, causal=True)
    c1, inp1 = _case(q_len=1)
    assert "one token per program" not in vllm_backend.prepare(inp1, c1, GPU).note
    c, inp = _case(v_head_dim=16)
    with pytest.raises(SkipRow, match="Dk == Dv"):
        vllm_backend.prepare(inp, c, GPU)


@pytest.fixture
def fake_flashinfer(monkeypatch):
    used = []

    class _Wrapper:
        def __init__(self, ws, layout):
            assert layout == "NHD"
            used.append(type(self).__name__)

        def plan(self, *args, **kw):
            self.args, self.kw = args, kw

        def run(self, q, kv, k_scale=None, v_scale=None, out=None):
            out.zero_()

    class BatchDecodeWithPagedKVCacheWrapper(_Wrapper):
        pass

    class BatchPrefillWithPagedKVCacheWrapper(_Wrapper):
        pass

    _module(
        monkeypatch,
        "flashinfer",
        BatchDecodeWithPagedKVCacheWrapper=BatchDecodeWithPagedKVCacheWrapper,
        BatchPrefillWithPagedKVCacheWrapper=BatchPrefillWithPagedKVCacheWrapper,
    )
    monkeypatch.setattr(torch.version, "hip", None)
    return used


def test_flashinfer_uses_its_decode_wrapper_at_q_len_1(fake_flashinfer):
    c, inp = _case(q_len=1)
    prep = flashinfer_backend.prepare(inp, c, GPU)
    assert fake_flashinfer == ["BatchDecodeWithPagedKVCacheWrapper"] and "decode wrapper" in prep.note
    c4, inp4 = _case(q_len=4)
    prep4 = flashinfer_backend.prepare(inp4, c4, GPU)
    assert fake_flashinfer[-1] == "BatchPrefillWithPagedKVCacheWrapper" and "prefill" in prep4.note
    c5, inp5 = _case(q_len=1, v_head_dim=16)  # the decode wrapper has one head dim: prefill with head_dim_vo
    flashinfer_backend.prepare(inp5, c5, GPU)
    assert fake_flashinfer[-1] == "BatchPrefillWithPagedKVCacheWrapper"
