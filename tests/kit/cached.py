"""One ``perfreport.analyze`` of a committed trace per test run, shared by the test files and the
pytest-xdist workers: :func:`analyzed` takes analyze's arguments and returns what that call returns,
read back from a pickle that the first caller wrote (under a file lock, so the other worker waits
for it instead of analysing the same trace again).

Each call unpickles its own copy: a test that changes its report changes nothing another test sees.
The key is the call, with two spellings of one call made one: a trace (or a path option) inside
the repository is analyzed as ``scripts/sheet_digests.py`` names it, relative to the repository
from its root (the report's ``source:`` note names that relative path), and an option given its
default value is left out. Otherwise it is the call as made (the trace and option strings as given,
and the working directory when the trace is a relative path). A refusal
(:class:`~perfreport.errors.BadInput`) is not cached. The folder is the run's base temporary folder
(``tests/conftest.py`` sets :data:`DIR` at the start of the session); without it (a helper called
outside a pytest run, or at collection time) :func:`analyzed` is analyze itself.

(One spelling a call: the fixtures' tests named them by absolute path and test_sheet_digests by
relative path, 27 analyses of 19 traces twice a run, ~4 CPU s.)
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import pickle
from pathlib import Path

DIR: list[Path] = []  # the cache folder of this run, once tests/conftest.py has set it
ROOT = Path(__file__).resolve().parents[2]


def _key(trace, kw: dict) -> str:
    where = "" if os.path.isabs(str(trace)) else os.getcwd()
    opts = sorted((k, str(v) if isinstance(v, os.PathLike) else v) for k, v in kw.items())
    return hashlib.sha256(repr((where, str(trace), opts)).encode()).hexdigest()[:24]


def _in_repo(value) -> str | None:
    """An existing file or folder inside the repository as its path relative to it, else None
    (an option such as ``arch="h100"`` stays as given)."""
    if not isinstance(value, str | os.PathLike) or str(value) == "-":
        return None
    p = Path(os.path.abspath(value))
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) and p.exists() else None


def _defaults() -> dict:
    from perfreport import analyze

    return {k: p.default for k, p in inspect.signature(analyze).parameters.items() if p.default is not p.empty}


def analyzed(trace, **kw):
    """``perfreport.analyze(trace, **kw)``, computed once per run (``kw``: plain option values)."""
    from perfreport import analyze

    if not DIR:
        return analyze(trace, **kw)
    from filelock import FileLock

    defaults = _defaults()
    kw = {k: v for k, v in kw.items() if not (k in defaults and type(v) is type(defaults[k]) and v == defaults[k])}
    rel = _in_repo(trace)
    if rel is not None:  # the repository's spelling, from its root
        kw = {k: (_in_repo(v) or v) if isinstance(v, str | os.PathLike) else v for k, v in kw.items()}
        with contextlib.chdir(ROOT):
            return _load(rel, kw, analyze, FileLock)
    return _load(trace, kw, analyze, FileLock)


def _load(trace, kw, analyze, FileLock):
    path = DIR[0] / f"{_key(trace, kw)}.pickle"
    with FileLock(str(path) + ".lock"):
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(analyze(trace, **kw), protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, path)
    return pickle.loads(path.read_bytes())  # the first caller too: every caller gets the same kind of copy
