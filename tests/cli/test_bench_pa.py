"""bench-pa on the CPU with tiny shapes, through typer's CliRunner on a local app."""

import json
import os

import pytest
import typer
from typer.testing import CliRunner

from perfreport.cli.bench_pa import COLUMNS, register

torch = pytest.importorskip("torch")
if torch.cuda.is_available():  # these tests pin CPU behaviour (labels, defaults)
    pytest.skip("CPU-path tests; a GPU is present", allow_module_level=True)
os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: triton runs in its interpreter

TINY = [
    "--context",
    "40",
    "--batch",
    "1",
    "--query-len",
    "2",
    "--q-heads",
    "4",
    "--kv-heads",
    "1",
    "--head-dim",
    "32",
    "--v-head-dim",
    "16",
    "--page-size",
    "16",
    "--reps",
    "3",
    "--arch",
    "h200",
]


@pytest.fixture(scope="module")
def app():
    a = typer.Typer()
    register(a)

    @a.command("noop")  # a second command so typer keeps "bench-pa" as a subcommand name
    def _noop():
        pass

    return a


def _run(app, *args):
    return CliRunner().invoke(app, ["bench-pa", *args])


def test_torch_backend_json_rows(app):
    r = _run(app, *TINY, "--kv-dtype", "bf16,fp8", "--layout", "nhd,5d", "--backend", "torch", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["clock"] == "cpu" and doc["device"] == "cpu" and "H200" in doc["arch"]
    rows = doc["rows"]
    assert len(rows) == 4 and {r["kv_dtype"] for r in rows} == {"bf16", "fp8"}
    assert {r["layout"] for r in rows} == {"NHD", "5D"}
    for row in rows:
        assert set(row) == set(COLUMNS)
        assert row["status"] in ("ok", "noisy") and row["clock"] == "cpu"  # a shared CPU may be noisy
        assert row["max_err"] < 1e-2 and row["speedup"] == pytest.approx(1.0)
        assert row["p10_us"] <= row["median_us"] <= row["p90_us"]
        assert row["bytes"] > 0 and row["roofline_us"] > 0 and row["pct_roofline"] > 0
    fp8 = [r for r in rows if r["kv_dtype"] == "fp8"][0]
    bf16 = [r for r in rows if r["kv_dtype"] == "bf16"][0]
    assert fp8["bytes"] < bf16["bytes"]  # FP8 KV is charged one byte per element


def test_triton_through_interpreter_and_csv(app, tmp_path):
    out = tmp_path / "pa.csv"
    r = _run(app, *TINY, "--kv-dtype", "fp8", "--backend", "triton", "--partitions", "2", "--csv", str(out))
    assert r.exit_code == 0, r.output
    assert "(CPU times)" in r.stderr and "triton" in r.stderr
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == COLUMNS and len(lines) == 3  # triton + the torch baseline
    assert ",triton,2," in lines[1]
    assert [p.name for p in tmp_path.iterdir()] == ["pa.csv"]  # the .partial file was renamed
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # the usual mode, not mkstemp's 0600
    row = dict(zip(COLUMNS, lines[1].split(",")))
    # as-implemented bytes (whole pages, Q per partition, partials) >= the model's ideal bytes
    assert float(row["impl_bytes"]) > float(row["bytes"]) > 0


def test_missing_package_is_skipped_with_its_name(app):
    r = _run(app, *TINY, "--kv-dtype", "bf16", "--backend", "flashinfer,torch", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert any("flashinfer" in s and ("install" in s or "GPU" in s) for s in doc["skipped"])
    assert [row["backend"] for row in doc["rows"]] == ["torch"]


def test_failed_correctness_exits_1(app, monkeypatch):
    from perfreport.pa.bench.backends import torch_backend

    real = torch_backend.prepare

    def broken(inputs, case, opts):
        p = real(inputs, case, opts)
        run = p.run
        p.run = lambda: run().mul_(2.0)
        return p

    monkeypatch.setattr(torch_backend, "prepare", broken)
    r = _run(app, *TINY, "--kv-dtype", "bf16", "--backend", "torch", "--json", "--quiet")
    assert r.exit_code == 1
    assert json.loads(r.stdout)["rows"][0]["status"] == "FAIL"
    assert "FAILED torch" in r.stderr


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--context", "16q"], "--context"),
        (["--kv-dtype", "fp16"], "--kv-dtype"),
        (["--layout", "hnd"], "--layout"),
        (["--partitions", "0"], "--partitions"),
        (["--q-heads", "3", "--kv-heads", "2"], "not divisible"),
        (["--backend", "cudnn"], "--backend"),
        (["--baseline", "torch,triton"], "--baseline"),
        (["--arch", "no-such-gpu"], "unknown GPU"),
        (["--head-dim", "40"], "multiple of 16"),
        (["--page-size", "48"], "power of two"),
        (["--reps", "0"], "--reps"),
        (["--partitions", "100000"], "--partitions"),
        (["--seed", str(2**70)], "--seed"),
        (["--seed", "-1"], "--seed"),
        (["--query-len", "100000", "--context", "300"], "exceeds --context"),
        (["--context", "1024m", "--batch", "32"], "needs about"),
        (["--fp8-mma", "int4"], "--fp8-mma"),
        (["--partials", "fp16"], "--partials"),
        (["--graph"], "--graph: CUDA/HIP graphs need a GPU"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(app, args, needle):
    r = _run(app, *args)
    assert r.exit_code == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.output


def test_trace_matches_analyze_within_5_percent(app, tmp_path):
    """The traced launch, read back by `perfreport analyze`, gives the same model and roofline %."""
    cli = pytest.importorskip("perfreport.cli.app")
    trace = tmp_path / "pa_trace.json"
    r = _run(
        app,
        *TINY,
        "--context",
        "40,100",
        "--kv-dtype",
        "bf16,fp8",
        "--backend",
        "torch",
        "--trace",
        str(trace),
        "--json",
        "--quiet",
    )
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    a = CliRunner().invoke(
        cli.app,
        ["analyze", str(trace), "--arch", "h200", "--sheet", "unified_perf_summary", "--format", "json", "--quiet"],
    )
    assert a.exit_code in (0, 3), a.output  # 3: a CPU trace has no GPU events
    sheet = json.loads(a.stdout)
    ops = [x for x in sheet["rows"] if x["name"] == "perfreport::paged_attention_decode"]
    assert len(ops) == len(rows) == 4
    for row in rows:
        match = [x for x in ops if abs(x["data moved (MB)"] * 1e6 - row["bytes"]) < 0.5]
        assert len(match) == 1, (row, ops)
        x = match[0]
        assert x["perf model"] and not x["reason"]
        assert x["roofline time (µs)"] == pytest.approx(row["roofline_us"], rel=1e-9)
        assert x["roofline median (%)"] == pytest.approx(row["trace_pct_roofline"], rel=0.05)


def test_memory_refusal_names_the_figure(app):
    r = _run(app, "--context", "1024m", "--batch", "64", "--backend", "torch")
    assert r.exit_code == 2
    line = r.stderr.strip().splitlines()[-1]
    assert "GiB" in line and ("host RAM" in line or "GPU" in line), line


@pytest.mark.parametrize("flag", ["--csv", "--trace"])
def test_output_targets_checked_up_front(app, tmp_path, flag):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    afile = tmp_path / "file"
    afile.write_text("x")
    adir = tmp_path / "adir"
    adir.mkdir()
    targets = {"missing": tmp_path / "nope" / "o", "parent is a file": afile / "o", "a directory": adir}
    if os.geteuid() != 0:  # root writes into 0500 directories anyway
        targets["read-only"] = ro / "o"
    for why, target in targets.items():
        r = _run(app, *TINY, "--backend", "torch", flag, str(target))
        assert r.exit_code == 2, (why, r.output)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and str(target) in lines[0] and "Traceback" not in r.output, (why, r.stderr)
    ro.chmod(0o700)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "file", "ro"]  # nothing written


def test_killed_run_keeps_the_rows_measured(app, tmp_path, monkeypatch):
    """The second case crashes (our backend): the first case's rows are on disk in .pa.csv.partial."""
    from perfreport.pa.bench.backends import torch_backend

    real = torch_backend.prepare

    def flaky(inputs, case, opts):
        if case.context == 100:
            raise KeyError("simulated crash")  # any exception: one line, exit 1
        return real(inputs, case, opts)

    monkeypatch.setattr(torch_backend, "prepare", flaky)
    out = tmp_path / "pa.csv"
    r = _run(app, *TINY, "--context", "40,100", "--backend", "torch", "--csv", str(out))
    assert r.exit_code == 1
    assert not out.exists()
    part = tmp_path / ".pa.csv.partial"
    lines = part.read_text().splitlines()
    assert len(lines) == 3 and all(ln.startswith("40,") for ln in lines[1:])  # bf16 and fp8 at 40
    assert str(part) in r.stderr and "Traceback" not in r.output and "KeyError" in r.stderr


def test_vendor_errors_become_skipped_rows(app, monkeypatch):
    """A vendor backend whose plan or launch raises gives a skipped row with the reason; exit 0."""
    from perfreport.pa.bench import backends as B
    from perfreport.pa.bench.backends import vllm_backend
    from perfreport.pa.bench.backends import aiter_backend

    def bad_plan(inputs, case, opts):
        raise KeyError("no kernel for head dim 32")

    def bad_launch(inputs, case, opts):
        def run():
            raise RuntimeError("HIP error: invalid device function")

        return B.Prepared(run=run, out=None)

    monkeypatch.setattr(vllm_backend, "prepare", bad_plan)
    monkeypatch.setattr(aiter_backend, "prepare", bad_launch)
    r = _run(app, *TINY, "--backend", "vllm,aiter,torch", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    rows = {x["backend"]: x for x in json.loads(r.stdout)["rows"]}
    assert rows["vllm"]["status"] == "skipped" and "plan failed: KeyError" in rows["vllm"]["note"]
    assert rows["aiter"]["status"] == "skipped" and "launch failed: RuntimeError: HIP error" in rows["aiter"]["note"]
    assert rows["torch"]["status"] in ("ok", "noisy")


def test_noisy_runs_are_flagged(app, monkeypatch):
    from perfreport.pa.bench import timing

    monkeypatch.setattr(timing, "time_launch", lambda fn, reps, **kw: timing.summarize([10.0, 20.0, 31.0] * 4, "cpu"))
    r = _run(app, *TINY, "--kv-dtype", "bf16", "--backend", "torch", "--json", "--quiet")
    row = json.loads(r.stdout)["rows"][0]
    # p10 = 10, p90 = 31 (linear interpolation over 12 sorted samples): 3.1 > 2
    assert row["spread"] == pytest.approx(3.1) and row["status"] == "noisy" and "p90/p10 = 3.1" in row["note"]


def test_vectorized_5d_v_layout_runs_triton_and_torch(app):
    r = _run(app, *TINY, "--kv-dtype", "bf16,fp8", "--layout", "5dv", "--backend", "triton,torch", "--json", "--quiet")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert {x["layout"] for x in rows} == {"5DV"} and len(rows) == 4
    assert all(x["status"] in ("ok", "noisy") and x["max_err"] < 2e-2 for x in rows)


def test_baseline_without_its_package_is_refused_before_running(app, tmp_path):
    import importlib.util

    if importlib.util.find_spec("aiter") is not None:
        pytest.skip("aiter is installed here")
    r = _run(
        app, *TINY, "--kv-dtype", "bf16", "--backend", "torch", "--baseline", "aiter", "--csv", str(tmp_path / "p.csv")
    )
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--baseline aiter: the 'aiter' package is not installed" in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == []


def test_baseline_never_measured_is_exit_2_and_no_csv(app, tmp_path, monkeypatch):
    """A baseline that skips every case (a platform it cannot run on) leaves no CSV of empty speedups."""
    from perfreport.pa.bench import backends as B
    from perfreport.pa.bench.backends import torch_backend

    def skip(*a, **k):
        raise B.Skip("not on this platform")

    monkeypatch.setattr(torch_backend, "prepare", skip)
    r = _run(
        app,
        *TINY,
        "--kv-dtype",
        "bf16",
        "--backend",
        "triton",
        "--baseline",
        "torch",
        "--csv",
        str(tmp_path / "p.csv"),
        "-q",
    )
    assert r.exit_code == 2, r.output
    assert "--baseline torch was not measured (torch: skipped: not on this platform)" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_cpu_run_names_given_shapes_and_says_no_spec_once(app):
    """Issue 23: 'small default shapes' was printed when shapes were given, and 'no GPU spec' once
    per row."""
    tiny = [a for a in TINY if a not in ("--arch", "h200")]
    r = _run(app, *tiny, "--kv-dtype", "bf16,fp8", "--layout", "nhd,5d", "--backend", "torch")
    assert r.exit_code == 0, r.output
    assert "running on the CPU (the shapes given;" in r.stderr and "small default shapes" not in r.stderr
    assert r.stderr.count("no GPU spec") == 1, r.stderr
