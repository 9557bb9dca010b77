"""Run :func:`~perfreport.multi.worker.analyze_trace` over many traces.

* ``serial``: in this process, one trace after another;
* ``process``: a :class:`concurrent.futures.ProcessPoolExecutor` of ``jobs`` workers, a fresh
  process for every trace (``max_tasks_per_child=1``, forked from a ``forkserver`` that imported
  perfreport once), so a worker's memory is one trace's peak
  (about 0.2-0.3x the trace's JSON size) and is returned to the system after each trace;
* ``ray``: the same function as Ray tasks (``pip install 'perfreport[ray]'``) on the cluster at
  ``ray_address``, or on a local instance of ``jobs`` CPUs started (and stopped) here; one task
  per trace, each in a fresh worker process (``max_calls=1``). The workers open the paths
  themselves: give paths they can see (a shared file system on a cluster).

Every engine returns the results in input order; the merge does not depend on which ran.
"""

from __future__ import annotations

import os

from perfreport.errors import BadInput
from perfreport.multi.worker import RankResult, analyze_trace

ENGINES = ("serial", "process", "ray")


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _task(path: str, opts: dict):
    """The unit every engine runs: bad input comes back as a value (one line), not a pickled
    exception."""
    try:
        return analyze_trace(path, opts)
    except BadInput as exc:
        return str(exc)


def run_all(
    paths: list[str], opts: dict, *, jobs: int | None = None, engine: str | None = None, ray_address: str | None = None
) -> list[RankResult]:
    jobs = max(1, int(jobs if jobs else cores()))
    engine = engine or ("process" if jobs > 1 and len(paths) > 1 else "serial")
    if engine not in ENGINES:
        raise BadInput("--engine", f"must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "serial":
        out = [_task(p, opts) for p in paths]
    elif engine == "process":
        out = _process(paths, opts, jobs)
    else:
        out = _ray(paths, opts, jobs, ray_address)
    for p, r in zip(paths, out):
        if isinstance(r, str):
            raise BadInput(*r.split(": ", 1)) if ": " in r else BadInput(p, r)
        r.path = p  # as given (Ray saw the absolute path)
    return out


def _process(paths, opts, jobs):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # a fresh process per trace, forked from a server that has imported perfreport once
    # (spawn would re-import it for every trace); 'fork' cannot be combined with
    # max_tasks_per_child
    try:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(
            ["perfreport.multi.worker", "perfreport.pipeline", "perfreport.tables", "perfreport.writers.excel"]
        )
    except ValueError:  # no forkserver on this platform
        ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=ctx, max_tasks_per_child=1) as ex:
        return list(ex.map(_task, paths, [opts] * len(paths)))


def _ray(paths, opts, jobs, address):
    try:
        import ray
    except ImportError:
        raise BadInput("--engine ray", "ray is not installed (pip install 'perfreport[ray]')") from None
    started = not ray.is_initialized()
    if started:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.remote(num_cpus=1, max_calls=1, max_retries=0)(_task)
        return ray.get([task.remote(os.path.abspath(p), opts) for p in paths])
    finally:
        if started:
            ray.shutdown()


__all__ = ["run_all", "ENGINES", "cores"]
