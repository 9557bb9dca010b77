"""Kineto trace events as msgspec decodes them, and the category codes of the columns.

:class:`Ev` is one ``traceEvents`` element with its ``args`` left as raw bytes; the ``*Args``
structs decode only the ``args`` keys the reader needs for each kind of event (GPU events,
runtime/driver calls, and the usual cpu_op keys for the interning fast path of
:class:`~perfreport.read.kineto.Collector`). ``CATS`` gives each kept category its small
integer code in the ``cat`` column.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from perfreport.events import CPU_OP, DRIVER, KERNEL, MEMCPY, MEMSET, NONE, PYTHON, RUNTIME, USER_ANNOTATION
from perfreport.read.columns import INT64_HI, INT64_LO

Id = int | str


class Ev(msgspec.Struct, array_like=False, gc=False):
    """One trace event; unknown keys are ignored, ``args`` stays raw until needed."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Id = 0
    tid: Id = 0
    ts: float | None = None
    dur: float | None = None
    id: Id | None = None
    args: msgspec.Raw = msgspec.Raw()


class GpuArgs(msgspec.Struct, gc=False):
    correlation: int | None = None
    stream: Id | None = None
    device: int | None = None
    ext: int | None = msgspec.field(default=None, name="External id")
    # Kineto before 1679e50e (2022-04-08) wrote the GPU events' external id in lower case
    ext_old: int | None = msgspec.field(default=None, name="external id")
    nbytes: int | None = msgspec.field(default=None, name="bytes")
    # NCCL/RCCL kernels carry their collective's fields (Kineto copies them from the
    # record_param_comms op): only their presence is decoded here, see Collector.gpu_comm
    coll: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Collective name")


class RtArgs(msgspec.Struct, gc=False):
    correlation: int | None = None
    ext: int | None = msgspec.field(default=None, name="External id")
    ext_old: int | None = msgspec.field(default=None, name="external id")  # as in GpuArgs


class RtArgsKernel(RtArgs, gc=False):
    """``RtArgs`` plus the kernel name ROCm's roctracer writes in a launch call's args
    (``args.kernel`` of ``hipLaunchKernel`` / ``hipModuleLaunchKernel``; CUDA traces may not).
    Decoded only when asked (graph-capture traces), as the string costs on every launch."""

    kernel: str | None = None


_R = msgspec.Raw


class OpArgs(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The usual ``args`` of a cpu_op / user_annotation, for the interning fast path.

    Volatile ids are decoded (or skipped); the other known keys stay raw bytes and form the
    interning key. Any other key makes decoding fail and the slow path handles the event.
    """

    ext: object = msgspec.field(default=None, name="External id")
    seq: object = msgspec.field(default=None, name="Sequence number")
    rf: _R = msgspec.field(default=_R(), name="Record function id")
    ev: _R = msgspec.field(default=_R(), name="Ev Idx")
    fin: _R = msgspec.field(default=_R(), name="finished")
    ci: _R = msgspec.field(default=_R(), name="Concrete Inputs")
    it: _R = msgspec.field(default=_R(), name="Input type")
    ist: _R = msgspec.field(default=_R(), name="Input Strides")
    idm: _R = msgspec.field(default=_R(), name="Input Dims")
    fwd: _R = msgspec.field(default=_R(), name="Fwd thread id")


# The inline loop of Collector.add decodes with these: ids typed as the int64 a column holds
# as is, absent ids as its NONE sentinel. Anything else (null, a string, a float, an id beyond
# int64 or one of the two sentinels) fails to decode and the event takes the exact path
# (perfreport/read/exact.py), which decodes it with the structs above.
_Col = Annotated[int, msgspec.Meta(ge=INT64_LO, le=INT64_HI)]


class FastGpuArgs(msgspec.Struct, gc=False):
    correlation: _Col = NONE
    stream: Id | None = None
    device: int | None = None
    ext: _Col = msgspec.field(default=NONE, name="External id")
    ext_old: _Col = msgspec.field(default=NONE, name="external id")
    nbytes: _Col = msgspec.field(default=NONE, name="bytes")
    coll: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Collective name")


class FastRtArgs(msgspec.Struct, gc=False):
    correlation: _Col = NONE
    ext: _Col = msgspec.field(default=NONE, name="External id")
    ext_old: _Col = msgspec.field(default=NONE, name="external id")


class FastRtArgsKernel(FastRtArgs, gc=False):
    kernel: str | None = None


class FastOpArgs(OpArgs, forbid_unknown_fields=True, gc=False):
    ext: _Col = msgspec.field(default=NONE, name="External id")
    seq: _Col = msgspec.field(default=NONE, name="Sequence number")


EVENT_DECODER = msgspec.json.Decoder(list[Ev])
fast_gpu_args = msgspec.json.Decoder(FastGpuArgs).decode
fast_rt_args = msgspec.json.Decoder(FastRtArgs).decode
fast_rt_args_kernel = msgspec.json.Decoder(FastRtArgsKernel).decode
fast_op_args = msgspec.json.Decoder(FastOpArgs).decode
decode_gpu_args = msgspec.json.Decoder(GpuArgs).decode
decode_rt_args = msgspec.json.Decoder(RtArgs).decode
decode_rt_args_kernel = msgspec.json.Decoder(RtArgsKernel).decode
decode_op_args = msgspec.json.Decoder(OpArgs).decode
decode_any = msgspec.json.decode
encode = msgspec.json.encode

# args keys that differ between otherwise identical ops; kept out of the interned dict
VOLATILE = (
    "External id",
    "Ev Idx",
    "Record function id",
    "Sequence number",
    "finished",
    "Python parent id",
    "Python id",
)

SHAPE_KEYS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")
NOT_A_LIST = "record_shapes fields (Input Dims, ...) that were not lists wrapped in one"

# category codes (the ``cat`` column); the first four are the launch/op kinds used by the tree
CATS = (CPU_OP, USER_ANNOTATION, RUNTIME, DRIVER, PYTHON, KERNEL, MEMCPY, MEMSET)
C_CPU_OP, C_USER_ANNOTATION, C_RUNTIME, C_DRIVER, C_PYTHON, C_KERNEL, C_MEMCPY, C_MEMSET = range(8)
CAT_CODE = {c: i for i, c in enumerate(CATS)}
CPU_CATS = {CPU_OP, USER_ANNOTATION, RUNTIME, DRIVER}
GPU_CATS = {KERNEL, MEMCPY, MEMSET}

# Other spellings of those categories, each with the code that writes it (docs/formats.md). All are
# from pytorch/kineto libkineto/src/output_json.cpp (ChromeTraceLogger) or ActivityType.h:
CAT_ALIASES = {
    # ChromeTraceLogger::handleCpuActivity wrote "Operator" up to 6f9c0eef (2021-06-08), which
    # switched it to toString(ActivityType) ("cpu_op")
    "Operator": CPU_OP,
    # handleRuntimeActivity / handleGpuActivity (kernel, memcpy, memset) wrote these literals up
    # to 1679e50e (2022-04-08, "Refactor 5/n"), which switched them to toString(ActivityType)
    "Runtime": RUNTIME,
    "Kernel": KERNEL,
    "Memcpy": MEMCPY,
    "Memset": MEMSET,
    # ActivityType MTIA_RUNTIME / MTIA_CCP_EVENTS, "mtia_runtime" / "mtia_ccp_events" since
    # 3cb331da (2023-04-17): the MTIA host runtime calls (launches, correlation in args) and the
    # device's own events (job execution, DMA, event waits), read as launches and GPU events
    "mtia_runtime": RUNTIME,
    "mtia_ccp_events": KERNEL,
}
# CPU-to-GPU flow categories: "ac2g" since fbd4d5be (2022-10-21); before it handleGenericLink wrote
# "async_cpu_to_gpu" (start) / "async_gpu" (end), and before 6f9c0eef handleLinkStart/End "async"
FLOW_CATS = frozenset(("ac2g", "async_cpu_to_gpu", "async_gpu", "async"))


__all__ = [
    "Ev",
    "GpuArgs",
    "RtArgs",
    "OpArgs",
    "EVENT_DECODER",
    "CATS",
    "CPU_CATS",
    "GPU_CATS",
    "NOT_A_LIST",
    "CAT_ALIASES",
    "FLOW_CATS",
    "C_CPU_OP",
    "C_USER_ANNOTATION",
    "C_RUNTIME",
    "C_DRIVER",
    "C_PYTHON",
    "C_KERNEL",
    "C_MEMCPY",
    "C_MEMSET",
]
