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
And it takes the shortest way through the language's type constructors where they would take a
detour (:func:`_fast_types`): ``block_type(ty, shape)`` unwraps an integer shape through a
``tl.tuple`` and its ``tuple_type`` twice (~10 nested calls a dimension), ``tensor(handle, ty)``
builds its constexpr shape the same way, and ``dtype ==`` / ``block_type ==`` unwrap their
operand first; the shortcut sets the same attributes to the same values (fresh objects, as there)
and answers the same, and hands anything else (a constexpr or non-integer dimension, an empty
shape) to the language's own: 2.99 -> 2.43 CPU s on three launches (page, split, FP8 5D cases),
the interpreter tests 36.5 -> 28.4 CPU s.
``tests/pa/kernel/test_partition_kernel.py`` checks that outputs are bit-identical with and without.

``tests/conftest.py`` installs it before each test once ``triton.runtime.interpreter`` is imported
(which it imports itself once triton is, under TRITON_INTERPRET=1: the first launch takes it too).
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
    _STATE["types"] = _fast_types(tl.core)
    return True


def _fast_types(core) -> list:
    """The language's value and type constructors without their detours, for the cases that take
    none (an integer shape): ``block_type(ty, shape)``, ``tensor(handle, ty)``, ``dtype ==``,
    ``block_type ==`` set the same attributes to the same values (a fresh ``tl.tuple`` of the same
    ints / constexprs, a fresh ``tuple_type`` of their ``constexpr_type``), and return the same;
    anything else (a constexpr or non-int dimension, an empty shape, a shape with a refusal) goes
    to the language's own. Returns what :func:`uninstall` puts back."""
    import math

    bt, tensor, dtype, tup, tup_type = core.block_type, core.tensor, core.dtype, core.tuple, core.tuple_type
    constexpr, constexpr_type, validate = core.constexpr, core.constexpr_type, core.validate_block_shape
    saved = [(bt, "__init__", bt.__init__), (tensor, "__init__", tensor.__init__)]
    saved += [(dtype, "__eq__", dtype.__eq__), (bt, "__eq__", bt.__eq__)]
    bt_init, dtype_eq, bt_eq = bt.__init__, dtype.__eq__, bt.__eq__
    shapes: dict = {}  # int shape -> (numel, its text in the type's name)
    new = object.__new__

    def int_tuple(vals):
        t = new(tup)
        t.values = list(vals)
        t.type = tup_type([constexpr_type(d) for d in vals])
        return t

    def block_init(self, element_ty, shape):
        vals = shape.values if type(shape) is tup else shape
        if type(vals) not in (list, tuple) or not vals or not all(type(d) is int for d in vals):
            return bt_init(self, element_ty, shape)
        key = tuple(vals)
        got = shapes.get(key)
        if got is None:
            got = shapes[key] = (validate(key), str([str(x) for x in key]))  # raises as the language does
        self.element_ty = element_ty
        self.shape = int_tuple(key)
        self.numel = got[0]
        self.name = f"<{got[1]}, {element_ty}>"

    def const(v):
        c = new(constexpr)
        c.value, c.type = v, constexpr_type(v)
        return c

    def tensor_init(self, handle, ty):
        self.handle = handle
        dims = ty.shape.values if ty.is_block() else ()
        if not all(type(d) is int for d in dims):
            return tensor_init_orig(self, handle, ty)
        self.numel = const(math.prod(dims))
        self.type = ty
        self.dtype = ty.scalar
        cs = [const(d) for d in dims]
        t = new(tup)
        t.values = cs
        t.type = tup_type([c.type for c in cs])
        self.shape = t

    tensor_init_orig = tensor.__init__

    def eq_dtype(self, other):
        if isinstance(other, dtype):  # what _unwrap_if_constexpr leaves as it is
            return self.name == other.name
        return dtype_eq(self, other)

    def eq_block(self, other):
        if type(other) is bt and type(self.shape) is tup and type(other.shape) is tup:
            if not self.element_ty == other.element_ty:
                return False
            return constexpr(self.shape.values == other.shape.values)  # tl.tuple's == of the same ints
        return bt_eq(self, other)

    bt.__init__, tensor.__init__, dtype.__eq__, bt.__eq__ = block_init, tensor_init, eq_dtype, eq_block
    return saved


def uninstall() -> None:
    """Put the interpreter's own functions back (the test that compares both ways)."""
    if _STATE:
        _STATE["module"]._patch_lang = _STATE["patch"]
        _STATE["module"].GridExecutor.__call__ = _STATE["launch"]
        _STATE["module"]._get_np_dtype = _STATE["np_dtype"]
        for cls, name, fn in _STATE["types"]:
            setattr(cls, name, fn)
        _STATE.clear()


def skipped() -> int:
    """Device-function patches skipped since :func:`install`."""
    return _STATE.get("skipped", 0)
