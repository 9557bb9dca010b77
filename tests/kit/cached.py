"""One ``perfreport.analyze`` of a committed trace per test run, shared by the test files and the
pytest-xdist workers: :func:`analyzed` takes analyze's arguments and returns what that call returns,
read back from a pickle that the first caller wrote (under a file lock, so the other worker waits
for it instead of analysing the same trace again).

Each call unpickles its own copy: a test that changes its report changes nothing another test sees.
The key is the call as made (the trace and option strings as given, and the working directory when
the trace is a relative path), so a report is only ever shared between identical calls; a refusal
(:class:`~perfreport.errors.BadInput`) is not cached. The folder is the run's base temporary folder
(``tests/conftest.py`` sets :data:`DIR` at the start of the session); without it (a helper called
outside a pytest run, or at collection time) :func:`analyzed` is analyze itself.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

DIR: list[Path] = []  # the cache folder of this run, once tests/conftest.py has set it


def _key(trace, kw: dict) -> str:
    where = "" if os.path.isabs(str(trace)) else os.getcwd()
    opts = sorted((k, str(v) if isinstance(v, os.PathLike) else v) for k, v in kw.items())
    return hashlib.sha256(repr((where, str(trace), opts)).encode()).hexdigest()[:24]


def analyzed(trace, **kw):
    """``perfreport.analyze(trace, **kw)``, computed once per run (``kw``: plain option values)."""
    from perfreport import analyze

    if not DIR:
        return analyze(trace, **kw)
    from filelock import FileLock

    path = DIR[0] / f"{_key(trace, kw)}.pickle"
    with FileLock(str(path) + ".lock"):
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(analyze(trace, **kw), protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, path)
    return pickle.loads(path.read_bytes())  # the first caller too: every caller gets the same kind of copy
