"""run_bench's timing helper: a launch that cannot be captured in a graph is timed without one."""

from perfreport.pa.bench import run as R
from perfreport.pa.bench import timing


def test_graph_capture_failure_falls_back_and_says_so(monkeypatch):
    calls = []

    def fake(fn, reps, *, on_gpu, flush_bytes=0, graph=False):
        calls.append(graph)
        if graph:
            raise RuntimeError("operation not permitted when stream is capturing")
        return timing.summarize([1.0, 2.0, 3.0], "gpu-events")

    monkeypatch.setattr(timing, "time_launch", fake)
    row = {"note": "one token per program"}
    t = R._timed(lambda: None, 3, True, 0, True, row)
    assert calls == [True, False] and t.clock == "gpu-events" and t.median_us == 2.0
    assert row["note"] == (
        "one token per program; graph capture failed (RuntimeError: operation not permitted when stream is "
        "capturing): timed without --graph"
    )
    row = {"note": ""}
    R._timed(lambda: None, 3, True, 0, False, row)
    assert calls[-1] is False and row["note"] == ""
