"""Option values without pydantic, where they are plain (kept out of ``cli/help.py``).

typer (0.29) turns each value typed on the command line into its Python type through a
pydantic ``TypeAdapter`` it builds, one per option, the first time the option is parsed (even
when the option was not given: its default goes through it too). For ``analyze``'s 25 options
that imports pydantic and builds 25 adapters: ~0.15 CPU s of every run, more than the rest of
the command line's start (docs/benchmarks.md, "Fixed cost of a small trace").

perfreport's options are plain: ``str``, ``bool``, ``int``, ``float``, ``Path`` and lists of
them, with no bounds, choices, parsers or file modes. :func:`light` gives each such option a
coercion that takes the plain cases itself (a string as typed; a flag's bool; an integer or a
decimal number written as digits; a path, checked by typer's own path check) and hands anything
else (``1e3``, ``x``, a bytes value, ...) to typer's pydantic coercion, so every error message
stays typer's word for word. ``tests/cli/test_coerce.py`` checks that both give the same value
on the plain cases. With a typer that lacks these internals, :func:`light` leaves options as
they are.
"""

from __future__ import annotations

from pathlib import Path

from perfreport.cli.fast_args import DEC as _DEC, INT as _INT  # plain digits (the same for int() and pydantic)

try:  # typer >= 0.29: a coercion object per option, built on first use
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
    from typer.core import _TyperParameter
except ImportError:  # another typer: its own coercion throughout
    RuntimeParam = None

_NO = object()  # not a plain case: typer's coercion decides
_LEAVES = (str, bool, int, float, Path)


def _leaf(annotation, value, param, ctx):
    if annotation is str:
        return value if type(value) is str else _NO
    if annotation is bool:
        return value if type(value) is bool else _NO
    if annotation is int:
        if type(value) is int:
            return value
        return int(value) if type(value) is str and _INT.match(value) else _NO
    if annotation is float:
        if type(value) is float:
            return value
        return float(value) if type(value) is str and _DEC.match(value) else _NO
    if annotation is Path and type(value) is str and value:  # typer's checks (exists, readable, ...)
        return coerce_cli_path(Path(value), param.type_descriptor.parameter_info, path_type=Path, param=param, ctx=ctx)
    return _NO


def _kind(descriptor):
    """(leaf type, is a list) of a plain option, else None."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None or descriptor.is_ranged:
        return None
    if getattr(info, "path_type", None) is not None or descriptor.is_choice:
        return None
    ann = descriptor.annotation
    if descriptor.is_list:
        args = getattr(ann, "__args__", ())
        return (args[0], True) if len(args) == 1 and args[0] in _LEAVES else None
    return (ann, False) if ann in _LEAVES else None


if RuntimeParam is not None:

    class Plain(RuntimeParam):
        """typer's coercion contract (``coerce``: None and list checks), plain cases here."""

        def _coerce_value(self, value, param, ctx):
            leaf, many = _kind(param.type_descriptor)
            if not many:
                got = _leaf(leaf, value, param, ctx)
            elif isinstance(value, (list, tuple)):
                got = [_leaf(leaf, v, param, ctx) for v in value]
                got = _NO if any(g is _NO for g in got) else got
            else:
                got = _NO
            if got is not _NO:
                return got
            param._runtime_param = full = build_runtime_param(param.type_descriptor)  # from now on
            return full._coerce_value(value, param=param, ctx=ctx)


def light(params) -> int:
    """Give each plain option of ``params`` (click parameters typer made) the pydantic-free
    coercion; returns how many were given it."""
    if RuntimeParam is None:
        return 0
    n = 0
    for p in params:
        if isinstance(p, _TyperParameter) and getattr(p, "_runtime_param", 0) is None and _kind(p.type_descriptor):
            p._runtime_param = Plain(
                parameter_info=p.type_descriptor.parameter_info, annotation=p.type_descriptor.annotation
            )
            n += 1
    return n
