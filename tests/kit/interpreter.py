"""The test run's shortcut through Triton's interpreter (TRITON_INTERPRET=1): a device function's
call does not patch ``triton.language`` again inside a launch in which it is patched already.

The interpreter patches ``triton.language`` (its builtins, the tensor methods, ``tl.math``) for
the interpreted semantics when a kernel is launched, and restores it when the launch ends. A call
of a ``@triton.jit`` device function from inside the kernel patches the same modules again
(``interpreter._patch_lang``, never restored): the builtins it would wrap are wrappers already, the
rest it sets to equivalent functions, so nothing changes but the cost: ``inspect.getmembers`` of
each module, ~0.75 ms a call, 17% of the partition kernel tests' CPU (4,767 calls, 3.6 of 20.6 s,
measured on their page, layout, scale and bf16-partial cases; ``tl.sum``, ``tl.max`` and
``tl.zeros`` are such functions, which see ``triton.language.core``). :func:`install` skips that
call when every language module the device function sees has been patched in the running launch
(by the launch or by an earlier call); anything else (a launch, the first call that sees another
module, a call outside a launch) goes through unchanged. It also remembers
``interpreter._get_np_dtype``'s answers (the numpy dtype of a Triton type, which rebuilds a dict
of 19 types at each of its calls: ~2,300 calls in one small split launch): the answer depends on
the element type alone, a pointer is uint64 as there, anything else is asked of the interpreter's
own function once.
``tests/pa/kernel/test_partition_kernel.py`` checks that outputs are bit-identical with and without.

``tests/conftest.py`` installs it before each test once ``triton.runtime.interpreter`` is imported.
"""

from __future__ import annotations

import sys

_STATE: dict = {}


def _langs(fn) -> frozenset:
    import triton.language as tl

    return frozenset(id(v) for v in fn.__globals__.values() if v is tl or v is tl.core)  # as _patch_lang picks


def install() -> bool:
    """Install the shortcut (once); False when the interpreter is not imported or is already done."""
    interp = sys.modules.get("triton.runtime.interpreter")
    if interp is None or _STATE:
        return False
    if not all(callable(getattr(interp, f, None)) for f in ("_patch_lang", "_get_np_dtype")) or not hasattr(
        getattr(interp, "GridExecutor", None), "__call__"
    ):
        return False  # another Triton's interpreter (the GPU image's 3.6): left as it is
    patch, launch, np_dtype = interp._patch_lang, interp.GridExecutor.__call__, interp._get_np_dtype
    running: list = []  # per running launch: the language modules patched in it so far (None before)

    def patch_lang(fn):
        langs = _langs(fn)
        if running and running[-1] is not None and langs <= running[-1]:
            _STATE["skipped"] += 1
            return None  # a device function's call: its result is not used
        scope = patch(fn)
        if running:  # patched now for the rest of the launch (the interpreter restores only the launch's own)
            running[-1] = langs | (running[-1] or frozenset())
        return scope

    def grid_call(self, *args, **kwargs):
        running.append(None)
        try:
            return launch(self, *args, **kwargs)
        finally:
            running.pop()

    import numpy as np
    import triton.language as tl

    dtypes: dict = {}

    def get_np_dtype(tt_dtype):
        key = tt_dtype.element_ty if isinstance(tt_dtype, tl.block_type) else tt_dtype
        if isinstance(key, tl.pointer_type):
            return np.dtype(np.uint64)
        got = dtypes.get(key)
        if got is None:
            got = dtypes[key] = np_dtype(key)
        return got

    _STATE.update(module=interp, patch=patch, launch=launch, np_dtype=np_dtype, skipped=0)
    interp._patch_lang, interp.GridExecutor.__call__ = patch_lang, grid_call
    interp._get_np_dtype = get_np_dtype
    return True


def uninstall() -> None:
    """Put the interpreter's own functions back (the test that compares both ways)."""
    if _STATE:
        _STATE["module"]._patch_lang = _STATE["patch"]
        _STATE["module"].GridExecutor.__call__ = _STATE["launch"]
        _STATE["module"]._get_np_dtype = _STATE["np_dtype"]
        _STATE.clear()


def skipped() -> int:
    """Device-function patches skipped since :func:`install`."""
    return _STATE.get("skipped", 0)
