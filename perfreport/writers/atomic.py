"""Atomic file output: write to a temporary file beside the target, then rename.

A failure while writing (disk full, a file size limit, an I/O error) or an interrupt
removes the temporary file and leaves the previous file at the target as it was; the
error becomes one :class:`~perfreport.errors.BadInput` line. The data is flushed to disk
(``fsync``) before the rename, so "disk full" shows up here and not later.

Inside :func:`transaction` the renames wait: every file of the run is written under
its temporary name, and all are renamed together when the ``with`` block ends without an
error; an error or an interrupt (SIGINT, SIGTERM) removes every temporary of the run instead,
those of :func:`staging_dir` (files written by worker processes) included, so no output of a
failed run is left. SIGINT and SIGTERM are held back during the renames.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path

from perfreport.errors import BadInput


def resolve_target(target: str | Path) -> Path:
    """Where a write to ``target`` lands: a symlink to a regular file is followed, so the
    link stays a link; anything else that is not a regular file is refused."""
    target = Path(target)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        if os.path.islink(target):
            raise BadInput(str(target), "is a dangling symbolic link; refusing to write through it") from None
        return target
    except OSError as exc:
        raise BadInput(str(target), f"cannot use as an output: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise BadInput(str(target), "is a directory, not a file name to write")
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(str(target), f"is {kind(st.st_mode)}, not a regular file; refusing to replace it")
    return Path(os.path.realpath(target)) if os.path.islink(target) else target


def kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


@contextlib.contextmanager
def atomic_path(target: str | Path, suffix: str = ""):
    """Yield a temporary path in the target's directory; on success rename it to ``target``."""
    shown = str(target)
    target = resolve_target(target)
    existed = target.exists()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=suffix or ".tmp", dir=target.parent)
    except OSError as exc:
        raise BadInput(shown, f"cannot write in {target.parent}: {exc.strerror}") from None
    os.close(fd)
    problem = None
    try:
        yield Path(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        if _ACTIVE:
            _ACTIVE[-1].add(tmp, target)
        else:
            os.replace(tmp, target)
    except OSError as exc:
        kept = "; the previous file is unchanged" if existed else ""
        problem = f"write failed ({exc.strerror or exc}); nothing written{kept}"
    except BaseException:
        _unlink(tmp)
        raise
    if problem is not None:
        _unlink(tmp)
        raise BadInput(shown, problem)  # the caller's ``with`` chains the OSError as context


def _unlink(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


_ACTIVE: list["Transaction"] = []  # the CLI is single-threaded: one stack per process


class Transaction:
    """The temporaries of one run and where each goes (see the module docstring)."""

    def __init__(self):
        self.pending: list[tuple[str, Path]] = []
        self.staged: list[tuple[Path, list[Path]]] = []  # staging dir, the dirs made for it

    def add(self, tmp, target) -> None:
        self.pending.append((str(tmp), Path(target)))

    def commit(self) -> None:
        held = _hold_signals()
        try:
            for i, (tmp, target) in enumerate(self.pending):
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    self.pending = self.pending[i:]
                    self.abort()
                    done = f"; {i} of the outputs were already in place" if i else "; nothing written"
                    raise BadInput(str(target), f"cannot rename into place ({exc.strerror}){done}") from None
            self.pending = []
            for d, _ in self.staged:
                with contextlib.suppress(OSError):
                    os.rmdir(d)
            self.staged = []
        finally:
            _release_signals(held)

    def abort(self) -> None:
        for tmp, _ in self.pending:
            _unlink(tmp)
        self.pending = []
        for d, made in reversed(self.staged):
            shutil.rmtree(d, ignore_errors=True)
            for m in reversed(made):
                with contextlib.suppress(OSError):
                    os.rmdir(m)
        self.staged = []


@contextlib.contextmanager
def transaction():
    """Defer every :func:`atomic_path` rename to the end of the block (see the module
    docstring). Inside another transaction it joins that one (its commit is the outer's)."""
    if _ACTIVE:
        yield _ACTIVE[-1]
        return
    t = Transaction()
    _ACTIVE.append(t)
    try:
        try:
            yield t
        except BaseException:
            t.abort()
            raise
        t.commit()
    finally:
        _ACTIVE.remove(t)


def staging_dir(final: str | Path) -> Path:
    """A new private directory inside ``final`` (made, with its missing parents) for files
    other processes write; the active transaction moves ``stage(f)`` entries into ``final``
    on commit and removes the directory, and what it made, on abort. Needs a transaction."""
    final = Path(final)
    made = [p for p in reversed([final, *final.parents]) if not p.exists()]
    try:
        for p in made:
            p.mkdir()
        d = Path(tempfile.mkdtemp(prefix=".perfreport-staging.", dir=final))
    except OSError as exc:
        for p in reversed(made):
            with contextlib.suppress(OSError):
                p.rmdir()
        raise BadInput(str(final), f"cannot create the directory: {exc.strerror}") from None
    _ACTIVE[-1].staged.append((d, made))
    return d


def _hold_signals():
    try:
        return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    except (AttributeError, ValueError):  # not POSIX, or not the main thread
        return None


def _release_signals(held) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
