"""C-heap hygiene for the big arrays of one analysis (glibc only; a no-op elsewhere).

The reader's columns, the tree's index arrays and the tables' numpy temporaries are large
(hundreds of KB to a few MB each) and short-lived, while the records live in Python's own
arenas. glibc's malloc raises its mmap threshold to the size of any freed mmapped block
(up to 32 MB), so after the first big free, later big arrays come from the brk heap and
freed ones stay in the process's RSS. :func:`tune` pins the threshold (big blocks are
mmapped and handed back on free) and :func:`trim` returns free heap pages.

The pinned mmap threshold is 1 MiB (:data:`MMAP_THRESHOLD`), the size of one chunk of input,
not malloc's default 128 KiB: the blocks the read allocates and frees for every chunk (the
splitter's buffer as it moves, the batches' temporaries) then come from the heap and reuse its
pages. At 128 KiB each was a fresh mmap the kernel faulted in and zeroed: at 650 MB, ~475k page
faults and ~1.4 s of system CPU in one run; at 1 MiB ~175k and ~0.6 s, with the same peak RSS
(docs/benchmarks.md, "Session 26: the read's page faults"). The trim threshold stays 128 KiB.

Both matter only for a big input: the reader calls :func:`tune` once it has read :data:`BIG`
bytes of JSON, and :func:`trim` does nothing before that. Below it no column outgrows malloc's
default 128 KiB mmap threshold, and a small trace's run does not load libc through ctypes
(~0.007 CPU s: ``import ctypes`` and ``CDLL``, a tenth of a 3 MB trace's analysis).

Pinning the thresholds changes malloc for the whole process, so it is opt-in: :func:`tune`
does nothing until :func:`enable` is called (the CLI does; the Python API does when
``analyze(..., tune_malloc=True)``). :func:`trim` changes no setting and runs once a big input
has been seen, enabled or not.
"""

from __future__ import annotations

_libc = None
_tuned = False
_enabled = False
_big = False  # a big input is being read: tune() was called

BIG = 4 << 20  # bytes of JSON (decompressed) after which the reader calls tune()

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 20  # blocks above this are mmapped (and unmapped when freed)
THRESHOLD = 128 << 10  # free heap top above this is handed back


def _lib():
    global _libc
    if _libc is None:
        try:
            import ctypes

            lib = ctypes.CDLL("libc.so.6")
            lib.mallopt, lib.malloc_trim  # glibc: both exist
            _libc = lib
        except (OSError, AttributeError):
            _libc = False
    return _libc


def enable() -> None:
    """Allow :func:`tune` to change this process's malloc settings (an opt-in)."""
    global _enabled
    _enabled = True


def tune() -> None:
    """Pin malloc's mmap and trim thresholds (once per process), if :func:`enable` was called;
    from now on :func:`trim` hands pages back (the reader calls this once the input is big)."""
    global _tuned, _big
    _big = True
    if _tuned or not _enabled:
        return
    _tuned = True
    lib = _lib()
    if lib:
        lib.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        lib.mallopt(M_TRIM_THRESHOLD, THRESHOLD)


def trim() -> None:
    """Hand freed heap pages back to the OS (nothing before a big input: see :data:`BIG`)."""
    if not _big:
        return
    lib = _lib()
    if lib:
        lib.malloc_trim(0)


__all__ = ["enable", "tune", "trim"]
