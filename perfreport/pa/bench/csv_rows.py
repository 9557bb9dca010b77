"""bench-pa's CSV, written row by row: a killed run keeps every row it measured.

Rows go to ``.<name>.partial`` beside the target, each flushed to disk as it is measured; a run
that ends normally renames it to the target (the previous file stays intact until then) with the
usual file mode (0666 minus the umask, not mkstemp's 0600). A run that is killed or fails
leaves the ``.partial`` file with the rows measured so far (its name is printed on an error).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path


def partial_path(target: str | Path) -> Path:
    t = Path(target)
    return t.with_name(f".{t.name}.partial")


class RowWriter:
    def __init__(self, target: str | Path, columns: list[str]):
        self.target = Path(target)
        self.columns = columns
        self.tmp = partial_path(self.target)
        self._f = open(self.tmp, "w", newline="")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.tmp, 0o666 & ~umask)
        self._w = csv.DictWriter(self._f, fieldnames=columns, extrasaction="ignore")
        self._w.writeheader()
        self._sync()

    def _sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())

    def write(self, row: dict) -> None:
        self._w.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in self.columns})
        self._sync()

    def close(self, ok: bool = True) -> None:
        """Rename to the target when ``ok``; otherwise keep the ``.partial`` file."""
        if self._f.closed:
            return
        self._sync()
        self._f.close()
        if ok:
            os.replace(self.tmp, self.target)

    def discard(self) -> None:
        """Remove the ``.partial`` file (a run whose rows must not be kept, e.g. without its baseline)."""
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


__all__ = ["RowWriter", "partial_path"]
