"""Output targets checked before the analysis starts (fail in well under a second).

:func:`check_outputs` refuses, with one :class:`~perfreport.errors.BadInput` line each:
a workbook path whose directory is missing, is a file or is not writable (a probe file is
created and removed, so a read-only mount is caught even for root), a name longer than the
file system allows, a target that is a directory or any other non-regular file (a device,
a FIFO, a symlink to ``/proc/self/fd/1``), and any output that *is* one of the inputs (the
trace, the ``--graph-capture`` trace or directory files, the ``--arch`` file, a ``--models``
file; compared by inode, so hard links and symlinks are caught too). ``--csv-dir`` must be
a directory or creatable, and may not hold a non-regular ``*.csv`` entry where a sheet's
CSV goes; :func:`check_csv_names` repeats the exact check once the sheet names are known.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from perfreport.errors import BadInput
from perfreport.writers.atomic import kind, resolve_target


def default_output(trace: str) -> Path:
    """``<trace stem>_perf_report.xlsx`` beside a trace file; in the current directory for
    stdin and streams (a FIFO, ``/dev/fd/63`` from ``<(zcat t.json.gz)``)."""
    if trace == "-":
        return Path("stdin_perf_report.xlsx")
    p = Path(trace)
    name = p.name
    for suf in (".gz", ".json"):
        if name.endswith(suf):
            name = name[: -len(suf)]
    try:
        regular = stat.S_ISREG(os.stat(p).st_mode)
    except OSError:
        regular = True  # the reader reports it
    return p.with_name(f"{name}_perf_report.xlsx") if regular else Path(f"{name}_perf_report.xlsx")


def _add_dir_or_file(out: dict, p: str, what_dir: str, what_file: str) -> None:
    if os.path.isdir(p):
        for e in os.scandir(p):
            if e.is_file():
                out[e.path] = what_dir
    else:
        out[p] = what_file


def input_files(
    trace: str,
    graph_capture: str | None = None,
    arch: str | None = None,
    models: list = (),
    model_config: str | None = None,
    others: dict | None = None,
) -> dict[str, str]:
    """{path: what it is} for every input file an output must not replace (``others``:
    {path: what} added as is, a directory standing for the files in it)."""
    out: dict[str, str] = {}
    if trace != "-":
        out[trace] = "the input trace"
    for p, what in (others or {}).items():
        _add_dir_or_file(out, str(p), f"a file of {what}", what)
    if model_config:
        out[str(model_config)] = "the --model-config file"
    if graph_capture:
        g = graph_capture.split("#", 1)[0] if not os.path.exists(graph_capture) else graph_capture
        _add_dir_or_file(out, g, "a --graph-capture input", "the --graph-capture trace")
    if arch and os.path.isfile(arch):
        out[arch] = "the --arch spec file"
    for m in models:
        out[str(m)] = "a --models file"
    return out


def _ids(inputs: dict[str, str]) -> dict[tuple[int, int], tuple[str, str]]:
    ids = {}
    for p, what in inputs.items():
        try:
            st = os.stat(p)
        except OSError:
            continue
        ids[(st.st_dev, st.st_ino)] = (p, what)
    return ids


def _same_as_input(target: Path, ids) -> None:
    try:
        st = os.stat(target)
    except OSError:
        return
    hit = ids.get((st.st_dev, st.st_ino))
    if hit:
        raise BadInput(str(target), f"is {hit[1]} ({hit[0]}); refusing to overwrite an input")


def _name_max(directory: Path) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _probe(directory: Path, shown: str) -> None:
    """Create and remove a file in ``directory`` (permissions, read-only mounts, quotas)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".perfreport-probe.", dir=directory)
    except OSError as exc:
        raise BadInput(shown, f"cannot write in {directory}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(tmp)


def _existing_dir(d: Path, shown: str, create: bool) -> Path:
    """``d`` itself if it is a directory; with ``create``, its nearest existing ancestor
    (which must be a directory) when ``d`` does not exist yet."""
    probe = d
    missing = []
    while True:
        try:
            st = os.stat(probe)
        except FileNotFoundError:
            if not create:
                raise BadInput(shown, f"directory {probe} does not exist") from None
            missing.append(probe.name)
            probe = probe.parent
            continue
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise BadInput(shown, "a part of the path is a file, not a directory") from None
            if exc.errno == errno.ENAMETOOLONG:
                raise BadInput(shown, "path too long") from None
            raise BadInput(shown, f"cannot use {probe}: {exc.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise BadInput(
                shown, f"{probe} is {kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else 'a file'}, not a directory"
            )
        limit = _name_max(probe)
        for name in missing:
            if len(os.fsencode(name)) > limit:
                raise BadInput(shown, f"directory name too long ({len(os.fsencode(name))} bytes; the limit is {limit})")
        return probe


def check_outputs(files, csv_dir: Path | None, inputs: dict[str, str]) -> None:
    """Refuse unusable output targets before any work (see the module docstring).
    ``files``: a file target (workbook, JSON) or a list of them; None entries are skipped."""
    ids = _ids(inputs)
    for xlsx in files if isinstance(files, (list, tuple)) else [files]:
        if xlsx is None:
            continue
        xlsx = Path(xlsx)
        shown = str(xlsx)
        parent = _existing_dir(xlsx.absolute().parent, shown, create=False)
        limit = _name_max(parent)
        if len(os.fsencode(xlsx.name)) > limit:
            raise BadInput(shown, f"file name too long ({len(os.fsencode(xlsx.name))} bytes; the limit is {limit})")
        _same_as_input(xlsx, ids)
        real = resolve_target(xlsx)
        _probe(real.absolute().parent, shown)
    if csv_dir is not None:
        csv_dir = Path(csv_dir)
        shown = str(csv_dir)
        _same_as_input(csv_dir, ids)
        base = _existing_dir(csv_dir.absolute(), shown, create=True)
        _probe(base, shown)
        if base == csv_dir.absolute():
            for e in os.scandir(base):
                if e.name.endswith(".csv"):
                    _check_csv(Path(e.path), ids)


def _check_csv(p: Path, ids) -> None:
    _same_as_input(p, ids)
    resolve_target(p)


def refuse_input(target, inputs: dict[str, str]) -> None:
    """BadInput if ``target`` is one of ``inputs`` (by inode: links included)."""
    _same_as_input(Path(target), _ids(inputs))


def check_existing(p: Path, inputs: dict[str, str]) -> None:
    """An existing target: not an input, and a regular file (or a link to one)."""
    _check_csv(Path(p), _ids(inputs))


def check_csv_names(csv_dir: Path, names: list[str], inputs: dict[str, str]) -> None:
    """Every ``<sheet>.csv`` target, before the first CSV is written."""
    ids = _ids(inputs)
    for n in names:
        p = csv_dir / f"{n}.csv"
        if os.path.lexists(p):
            _check_csv(p, ids)


__all__ = ["refuse_input", "check_existing", "check_outputs", "check_csv_names", "default_output", "input_files"]
