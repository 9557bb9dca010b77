"""The plain command lines of a command parsed from its table of arguments
(:mod:`perfreport.cli.analyze_options`) without typer, which costs ~0.12 CPU s to import and
build; anything else is left to typer, so its messages and behaviour stay its own.

Plain means: option names given whole (``--csv-dir DIR``, ``-o FILE``, ``-q``; not
``--csv-dir=DIR``, not ``-qo FILE``), each at most once unless it is a list, a value after each
option that takes one which does not itself start with ``-`` (``-`` alone, stdin, is fine), and
values typer would read the same way: text as typed, a path that is not empty, an int or a
decimal number written in plain digits (:data:`INT`, :data:`DEC`). Positional arguments may
come anywhere (typer allows it too). ``-h``, ``--help``, ``--``, an unknown option, a missing
argument, a value that is not plain: :func:`parse` returns None and typer parses the line.
tests/cli/test_fast_args.py holds the values equal to typer's on generated command lines.
"""

import re
import typing
from pathlib import Path

# plain digits only (no sign but '-', no '_', no spaces, no leading zeros): the same number for
# int()/float() and typer's coercion; at most 18 digits each side, so every int fits 64 bits
INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
DEC = re.compile(r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,18})?\Z")
_NO = object()


def leaf(annotation):
    """(type, is a list) of an argument's annotation: ``Optional[Path]`` -> (Path, False)."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (list, typing.List):
        return args[0], True
    if args:  # Optional[X]
        return next(a for a in args if a is not type(None)), False
    return annotation, False


def value(kind, text: str):
    """``text`` as typer would read it for ``kind``, or ``_NO`` where that is not plain."""
    if kind is str:
        return text
    if kind is Path:
        return Path(text) if text else _NO
    if kind is int:
        return int(text) if INT.match(text) else _NO
    if kind is float:
        return float(text) if DEC.match(text) else _NO
    return _NO


def _flags(options) -> dict:
    out = {}
    for o in options:
        for f in o.flags:
            if "/" in f:  # --summary/--no-summary
                on, off = f.split("/")
                out[on], out[off] = (o, True), (o, False)
            else:
                out[f] = (o, None)
    return out


def parse(args: list, argument, options) -> dict | None:
    """``{name: value}`` of every argument (defaults for those not given) of a plain command
    line ``args`` (after the command's name), or None (typer's to parse)."""
    flags = _flags(options)
    out = {o.dest: (list(o.default) if isinstance(o.default, list) else o.default) for o in options}
    seen: set = set()
    positional: list = []
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "-" or not a.startswith("-"):
            positional.append(a)
            i += 1
            continue
        hit = flags.get(a)
        if hit is None:
            return None
        o, switch = hit
        kind, many = leaf(o.annotation)
        if o.dest in seen and not many:
            return None
        seen.add(o.dest)
        if kind is bool:
            out[o.dest] = True if switch is None else switch
            i += 1
            continue
        if i + 1 >= n or (args[i + 1].startswith("-") and args[i + 1] != "-"):
            return None
        v = value(kind, args[i + 1])
        if v is _NO:
            return None
        if many:
            out[o.dest].append(v)
        else:
            out[o.dest] = v
        i += 2
    if not positional:
        return None
    out[argument.dest] = positional
    return out


__all__ = ["DEC", "INT", "leaf", "parse", "value"]
