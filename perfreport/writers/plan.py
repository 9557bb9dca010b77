"""The output plan of one command: every path it will write, checked before any work.

An :class:`OutputPlan` lists the files a run writes (workbook, HTML page, JSON, each per-rank
workbook, bench-pa's CSV and its ``.partial`` file, a trace) and the directories it fills
(``--csv-dir``: every ``*.csv`` in it is the run's). :meth:`OutputPlan.check` refuses, with one
:class:`~perfreport.errors.BadInput` line:

* a target that is unusable or is one of the inputs (:func:`~perfreport.writers.targets.check_outputs`);
* two targets that are the same file (same path after resolving symbolic links, or the same
  inode when both exist): the line names both options, e.g. ``-o`` and ``--html``;
* a file target that is a ``*.csv`` inside the ``--csv-dir`` directory, or is the directory.

The writes themselves go through :func:`perfreport.writers.atomic.transaction`, so the plan
is also the list of what a failure or an interrupt removes.
"""

from __future__ import annotations

import os
from pathlib import Path

from perfreport.errors import BadInput
from perfreport.writers.targets import check_existing, check_outputs


def _key(p: Path) -> str:
    """The path a write lands on: symbolic links in the directories (and of the file) resolved."""
    return os.path.normcase(os.path.realpath(os.path.abspath(p)))


def _inode(p: Path):
    try:
        st = os.stat(p)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class OutputPlan:
    """``files``: (path, what) of every file target; ``dirs``: (path, what, suffix) of every
    directory target whose ``*suffix`` files the run writes. ``what`` names the option
    (``-o``, ``--html``, ``the --per-rank workbook of r1.json``) in refusals."""

    def __init__(self, inputs: dict[str, str]):
        self.inputs = inputs
        self.files: list[tuple[Path, str]] = []
        self.dirs: list[tuple[Path, str, str]] = []
        self._in_dirs: set[int] = set()  # indices of files inside a directory target (made later)

    def file(self, path, what: str, in_dir: bool = False) -> "OutputPlan":
        """``in_dir``: the file goes into a directory target that may not exist yet (its
        directory is checked as that target; the file itself against the inputs and the rest)."""
        if path is not None:
            if in_dir:
                self._in_dirs.add(len(self.files))
            self.files.append((Path(path), what))
        return self

    def directory(self, path, what: str, suffix: str = ".csv") -> "OutputPlan":
        if path is not None:
            self.dirs.append((Path(path), what, suffix))
        return self

    @property
    def paths(self) -> list[Path]:
        return [p for p, _ in self.files]

    def check(self) -> "OutputPlan":
        """Every target usable, none an input, no two the same (see the module docstring)."""
        for d, _, _ in self.dirs:
            check_outputs([], d, self.inputs)
        for i, (p, _) in enumerate(self.files):
            if i not in self._in_dirs:
                check_outputs([p], None, self.inputs)
            elif os.path.lexists(p):
                check_existing(p, self.inputs)
        seen: dict[str, tuple[Path, str]] = {}
        ids: dict[tuple, tuple[Path, str]] = {}
        for p, what in self.files:
            k, ino = _key(p), _inode(p)
            other = seen.get(k) or (ids.get(ino) if ino else None)
            if other is not None:
                raise BadInput(
                    str(p), f"{other[1]} and {what} would both write this file ({other[0]}); give them different names"
                )
            seen[k] = (p, what)
            if ino:
                ids[ino] = (p, what)
        for d, dwhat, suffix in self.dirs:
            dk = _key(d)
            for p, what in self.files:
                if _key(p) == dk:
                    raise BadInput(
                        str(p), f"{what} is the directory {dwhat} writes into ({d}); give them different names"
                    )
                if _key(p.parent) == dk and p.name.endswith(suffix):
                    raise BadInput(
                        str(p),
                        f"{what} is a {suffix} file inside {dwhat} {d}, where every {suffix} file is one of its outputs; "
                        "use another name or directory",
                    )
        return self


__all__ = ["OutputPlan"]
