"""Run :func:`~perfreport.multi.worker.analyze_trace` over many traces.

* ``serial``: in this process, one trace after another;
* ``process``: a :class:`concurrent.futures.ProcessPoolExecutor` of ``jobs`` workers, a fresh
  process for every trace (``max_tasks_per_child=1``, forked from a ``forkserver`` that imported
  perfreport once), so a worker's memory is one trace's peak
  (about 0.2-0.3x the trace's JSON size) and is returned to the system after each trace;
* ``ray``: the same function as Ray tasks (``pip install 'perfreport[ray]'``) on the cluster at
  ``ray_address``, or on a local instance of ``jobs`` CPUs started (and stopped) here, its session
  files in a folder of ours removed after (``ray_connect.session_dir``); one task
  per trace, each in a fresh worker process (``max_calls=1``). The workers open the paths
  themselves: give paths they can see (a shared file system on a cluster).

Every engine returns the results in input order; the merge does not depend on which ran.
"""

from __future__ import annotations

import contextlib
import logging
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
    paths: list[str],
    opts: dict,
    *,
    jobs: int | None = None,
    engine: str | None = None,
    ray_address: str | None = None,
    left_out: list | None = None,
    quiet: bool = False,
) -> list[RankResult]:
    """The results of the traces, in input order. A trace that cannot be read raises its
    BadInput, or with ``left_out`` (a list: ``--keep-going``) is left out and named there."""
    jobs = max(1, int(jobs if jobs else cores()))
    engine = engine or ("process" if jobs > 1 and len(paths) > 1 else "serial")
    if engine not in ENGINES:
        raise BadInput("--engine", f"must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "serial":
        out = [_task(p, opts) for p in paths]
    elif engine == "process":
        out = _process(paths, opts, jobs)
    else:
        out = _ray(paths, opts, jobs, ray_address, quiet)
    good = []
    for p, r in zip(paths, out):
        if isinstance(r, str):
            err = BadInput(*r.split(": ", 1)) if ": " in r else BadInput(p, r)
            if left_out is None:
                raise err
            left_out.append(str(err))
            continue
        r.path = p  # as given (Ray saw the absolute path)
        good.append(r)
    return good


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
    ex = ProcessPoolExecutor(
        max_workers=min(jobs, len(paths)), mp_context=ctx, max_tasks_per_child=1, initializer=_worker_signals
    )
    try:
        return list(ex.map(_task, paths, [opts] * len(paths)))
    except OSError as exc:  # the pool could not start (e.g. $TMPDIR too long for the forkserver's socket)
        _stop(ex)
        raise BadInput("--jobs", f"worker processes failed ({exc}); --engine serial runs in this process") from None
    except BaseException:  # an interrupt or a broken pool: stop the workers now, not after their trace
        _stop(ex)
        raise
    finally:
        ex.shutdown(wait=True)


def _stop(ex) -> None:
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        proc.terminate()
    ex.shutdown(wait=True, cancel_futures=True)


def _ray(paths, opts, jobs, address, quiet=False):
    try:
        import ray
    except ImportError:
        raise BadInput("--engine ray", "ray is not installed (pip install 'perfreport[ray]')") from None
    from perfreport.multi.ray_connect import check_address, ray_errors, session_dir

    # what this call starts it stops (also after an init that failed half-way), then removes a
    # local instance's session folder: the exit stack unwinds in that order
    with ray_errors(address), contextlib.ExitStack() as stack:
        if not ray.is_initialized():
            quiet_kw = {"logging_level": logging.ERROR} if quiet else {}
            if address:
                check_address(address)
                stack.callback(ray.shutdown)
                ray.init(address=address, log_to_driver=False, **quiet_kw)
            else:  # a local instance: its session files in a folder of ours
                temp = stack.enter_context(session_dir())
                stack.callback(ray.shutdown)
                ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, _temp_dir=temp, **quiet_kw)
        task = ray.remote(num_cpus=1, max_calls=1, max_retries=0)(_task)
        return ray.get([task.remote(os.path.abspath(p), opts) for p in paths])


def _worker_signals() -> None:
    """Workers leave SIGINT (a Ctrl-C reaches the whole process group) to the parent, which
    stops them; SIGTERM ends them at once (the parent removes what they staged)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


__all__ = ["run_all", "ENGINES", "cores"]
