"""Atomic file output: write to a temporary file beside the target, then rename.

A failure while writing (disk full, a file size limit, an I/O error) or an interrupt
removes the temporary file and leaves the previous file at the target as it was; the
error becomes one :class:`~perfreport.errors.BadInput` line. The data is flushed to disk
(``fsync``) before the rename, so "disk full" shows up here and not later.
"""

from __future__ import annotations

import contextlib
import os
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
