"""cli/bench_pa_args.py: bench-pa's options checked before anything is allocated; one line, exit 2."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import typer

import perfreport.pa.bench.memory as memory
from perfreport.cli.bench_pa_args import BadArgs, bad, build_cases, check_baseline, check_memory, parse_options

GRID = dict(
    query_len="1",
    q_heads="8",
    kv_heads="2",
    head_dim="64",
    v_head_dim="64",
    page_size="16",
    kv_dtype="bf16",
    layout="nhd",
)


def test_build_cases_is_the_product_of_the_lists():
    cases = build_cases("1k,2k", "2,4", **{**GRID, "kv_dtype": "bf16,fp8_e4m3"})
    assert len(cases) == 2 * 2 * 2
    assert [(c.context, c.batch, c.kv_dtype) for c in cases[:3]] == [
        (1024, 2, "bf16"),
        (1024, 2, "fp8"),
        (1024, 4, "bf16"),
    ]
    assert {(c.layout, c.page, c.q_heads, c.kv_heads) for c in cases} == {("NHD", 16, 8, 2)}


@pytest.mark.parametrize(
    ("change", "msg"),
    [
        ({"page_size": "48"}, "--page-size: 48 is not a power of two in [16, 256]"),
        ({"q_heads": "6", "kv_heads": "4"}, "--q-heads 6 is not divisible by --kv-heads 4"),
        ({"query_len": "2048"}, "--query-len 2048 exceeds --context 1024"),
        ({"head_dim": "40"}, "--head-dim"),
        ({"layout": "hnd"}, "--layout"),
    ],
)
def test_build_cases_refusals(change, msg):
    with pytest.raises(BadArgs, match=msg.replace("[", r"\[").replace("]", r"\]")):
        build_cases("1k", "2", **{**GRID, **change})


def test_check_baseline():
    check_baseline("torch", gpu=False, graph=False)
    with pytest.raises(BadArgs, match="--graph: CUDA/HIP graphs need a GPU"):
        check_baseline("torch", gpu=False, graph=True)
    with pytest.raises(BadArgs, match="--baseline no_such_pkg_x: the 'no_such_pkg_x' package is not installed"):
        check_baseline("no_such_pkg_x", gpu=False, graph=False)


def test_check_memory_against_what_is_available(monkeypatch):
    cases = build_cases("1k", "2", **GRID)
    monkeypatch.setattr(memory, "available_bytes", lambda on_gpu: (1000, "available host RAM"))
    with pytest.raises(
        BadArgs, match=r"context 1024 batch 2 q_len 1 bf16 needs about .*, more than the .* available host RAM"
    ):
        check_memory(cases, ["torch"], 1, on_gpu=False)
    monkeypatch.setattr(memory, "available_bytes", lambda on_gpu: (None, "unknown"))
    check_memory(cases, ["torch"], 1, on_gpu=False)


def _opts(**kw):
    """parse_options' arguments: the GPU flag and the options by name, as bench_pa passes them."""
    base = dict(
        context=None, batch=None, backend=None, baseline="torch", partitions="1", seed=0,
        fp8_mma="f16", partials="fp32", graph=False, reps=None, arch=None, csv_path=None, trace=None, **GRID,
    )  # fmt: skip
    return False, SimpleNamespace(**{**base, **kw})


def test_parse_options_cpu_defaults():
    cases, names, base, parts, mma, part_dt = parse_options(*_opts())
    assert [(c.context, c.batch) for c in cases] == [(300, 2), (1024, 2)]
    assert (names, base, mma, part_dt) == (["torch"], "torch", "f16", "fp32")


@pytest.mark.parametrize(
    ("kw", "line"),
    [
        ({"reps": 0}, "--reps must be in [1, 100000], got 0"),
        ({"fp8_mma": "f16,fp8"}, "--fp8-mma and --partials take one value each"),
        ({"baseline": "torch,triton"}, "--baseline takes one backend"),
    ],
)
def test_parse_options_exits_2_with_one_line(kw, line, capsys):
    with pytest.raises(typer.Exit) as e:
        parse_options(*_opts(**kw))
    assert e.value.exit_code == 2
    assert capsys.readouterr().err == f"perfreport bench-pa: {line}\n"


def test_bad():
    with pytest.raises(typer.Exit):
        bad("x")


def test_parse_options_probes_the_gpu_only_when_a_default_or_check_needs_it(capsys):
    """A probe passed for the GPU flag is not called for an option refused by its syntax, and
    called (once: bench_pa caches it) when the defaults or the memory check need it."""
    calls = []

    def probe():
        calls.append(1)
        return False

    gpu, o = _opts(context="12q")
    with pytest.raises(typer.Exit):
        parse_options(probe, o)
    assert calls == [] and "--context: '12q' is not a size" in capsys.readouterr().err
    gpu, o = _opts(backend="nope")
    with pytest.raises(typer.Exit):
        parse_options(probe, o)
    assert calls == []
    cases, *_ = parse_options(probe, _opts()[1])
    assert calls and [(c.context, c.batch) for c in cases] == [(300, 2), (1024, 2)]
