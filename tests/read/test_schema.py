"""Kineto events as msgspec decodes them (perfreport/read/schema.py): unknown keys ignored,
args left raw, the cpu_op fast-path struct refusing keys it does not know."""

from __future__ import annotations

import msgspec
import pytest

from perfreport.events import CPU_OP, KERNEL, MEMSET
from perfreport.read import schema


def test_event_decoding_keeps_args_raw_and_ignores_unknown_keys():
    (ev,) = schema.EVENT_DECODER.decode(
        b'[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.5, "dur": 2,'
        b' "unknown": {"a": [1]}, "args": {"device": 0, "stream": 7, "correlation": 3}}]'
    )
    assert (ev.ph, ev.cat, ev.name, ev.ts, ev.dur) == ("X", "kernel", "k", 1.5, 2.0)
    assert bytes(ev.args) == b'{"device": 0, "stream": 7, "correlation": 3}'
    a = schema.decode_gpu_args(ev.args)
    assert (a.device, a.stream, a.correlation, a.ext, a.coll) == (0, 7, 3, None, msgspec.Raw())


def test_op_args_fast_path_refuses_unknown_keys():
    a = schema.decode_op_args(b'{"External id": 4, "Input Dims": [[2, 3]]}')
    assert a.ext == 4 and bytes(a.idm) == b"[[2, 3]]"
    with pytest.raises(msgspec.ValidationError):
        schema.decode_op_args(b'{"External id": 4, "Python id": 1}')  # the slow path takes it


def test_category_codes():
    assert schema.CATS[schema.C_CPU_OP] == CPU_OP and schema.CATS[schema.C_KERNEL] == KERNEL
    assert schema.CATS[schema.C_MEMSET] == MEMSET and schema.CAT_CODE[KERNEL] == schema.C_KERNEL
    assert schema.CPU_CATS.isdisjoint(schema.GPU_CATS)
