"""Collective calls of traces without ``record_param_comms`` metadata (PyTorch before about 2.1).

Older traces record a collective without the ``Collective name`` / ``In msg nelems`` /
``Process Group ...`` args, so :func:`perfreport.multi.collectives.extract_calls` finds
nothing in them. They still hold, from the outside in (facebookresearch/param's DLRM traces,
PyTorch 2.0-era, are an example):

* a ``c10d::<op>`` cpu_op: the dispatcher op that ``torch.distributed`` calls, registered in
  pytorch/pytorch ``torch/csrc/distributed/c10d/Ops.cpp`` (``TORCH_LIBRARY(c10d, m)``:
  ``allreduce_``, ``allgather_``, ``_allgather_base_``, ``reduce_scatter_``,
  ``_reduce_scatter_base_``, ``alltoall_base_``, ``alltoall_``, ``broadcast_``, ``reduce_``,
  ``send``, ``recv_``, ``barrier`` ...);
* a ``record_param_comms`` op without the collective fields;
* an ``nccl:<collective>`` user annotation: the ``profilingTitle`` that ProcessGroupNCCL
  (``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``, ``collective()`` / ``pointToPoint()``)
  records with the call's input tensors (``"nccl:all_reduce"``, ``"nccl:all_to_all"``,
  ``"nccl:_allgather_base"``, ``"nccl:send"`` ...), so its ``Input Dims`` / ``Input type`` give
  the message;
* the NCCL/RCCL kernel it launches: ``ncclKernel_<Coll>_<ALGO>_<PROTO>_<RedOp>_<type>`` (NCCL
  before 2.19, ``NCCL_KERN_NAME`` in ``src/collectives/device/common.h``) or
  ``ncclDevKernel_<Coll>_<ALGO>_<PROTO>`` (2.19 on, ``src/device/generate.py``); RCCL keeps the
  names.

One call per outermost ``nccl:*`` annotation, else per outermost ``c10d::*`` op with GPU work,
else per NCCL kernel no op claimed. The collective comes from the annotation's (or op's, or
kernel's) name; the message from the annotation's first tensor argument: in elements = the
product of its dims, dtype = its type. That is the whole buffer for all-reduce, broadcast, reduce,
reduce-scatter (the input is the full buffer) and all-to-all (send = receive size), and one
rank's shard for all-gather, whose gathered output is group size x that: all-gather's out
elements are left unknown (so its message size is the shard) and the row says so. Process
group, its ranks and ``Seq`` are unknown: calls are matched across ranks by (collective, n-th
call), and the group size is the number of ranks that have the call.
"""

from __future__ import annotations

import re

from perfreport.events import CPU_OP, USER_ANNOTATION

NCCL_PREFIX = "nccl:"
C10D_PREFIX = "c10d::"
COMM_OP = "record_param_comms"
KERNEL_RX = re.compile(r"^(?:void )?(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)")
NOT_COLLECTIVE = {"barrier", "monitoredbarrier"}  # no message (a barrier is a tiny all-reduce)


def collective_of(name: str) -> str | None:
    """The collective an op, annotation or kernel name stands for (``nccl:all_reduce`` ->
    ``all_reduce``, ``c10d::alltoall_base_`` -> ``alltoall_base``, ``ncclKernel_AllReduce_...``
    -> ``AllReduce``); None for anything else."""
    if name.startswith(NCCL_PREFIX):
        return name[len(NCCL_PREFIX) :] or None
    if name.startswith(C10D_PREFIX):
        c = name[len(C10D_PREFIX) :].strip("_")
        return c or None
    m = KERNEL_RX.match(name)
    return m.group(1) if m else None


def _is_gather(coll: str) -> bool:
    c = coll.lower().replace("_", "")
    return "allgather" in c or c == "gather"


def _message(args) -> tuple:
    """(elements, dtype) of the first tensor argument recorded (None, None without shapes)."""
    dims = args.get("Input Dims") or []
    types = args.get("Input type") or []
    for i, d in enumerate(dims):
        if isinstance(d, list) and d and all(isinstance(x, int) for x in d):
            n = 1
            for x in d:
                n *= x
            return n, (types[i] if i < len(types) else None)
    return None, None


def _call(o, kernels, source: str, coll: str, args) -> dict:
    nel, dtype = _message(args)
    gather = _is_gather(coll)
    c = {
        "collective": coll,
        "dtype": dtype,
        "in_nelems": nel,
        "out_nelems": None,
        "group_size": None,
        "pg": "",
        "pg_desc": "",
        "pg_ranks": "",
        "seq": None,
        "cpu_ts": o.ts,
        "source": source,
        "inferred": True,
        "size_note": "one rank's shard (gathered output = group size x this)" if gather and nel else "",
    }
    _times(c, kernels)
    return c


def _times(c: dict, ks) -> None:
    if ks:
        c["start"] = min(k.ts for k in ks)
        c["end"] = max(k.end for k in ks)
        c["kernel_time"] = float(sum(k.dur for k in ks))
        c["kernel"] = ks[0].name
    else:
        c["start"] = c["end"] = c["kernel_time"] = None
        c["kernel"] = ""


def inferred_calls(tree, claimed: set) -> list[dict]:
    """The calls of ``tree`` that no ``record_param_comms`` with metadata holds (see the module
    docstring). ``claimed``: uids of GPU events already in a call (updated)."""
    calls = []
    used: set = set()  # uids of the ops whose calls are made
    for o in tree.ops:
        if o.cat not in (CPU_OP, USER_ANNOTATION) or not o.name.startswith(NCCL_PREFIX):
            continue
        if any(p.name.startswith(NCCL_PREFIX) for p in o.ancestors()):
            continue
        if any(p.name == COMM_OP and "Collective name" in p.args for p in o.ancestors()):
            continue  # the newer metadata holds this call
        if any(d.name == COMM_OP and "Collective name" in d.args for d in o.walk()):
            continue  # ... or nests inside it (either order is seen)
        coll = collective_of(o.name)
        if coll is None or coll.lower() in NOT_COLLECTIVE:
            continue
        all_ks = o.subtree_kernels()
        ks = [k for k in all_ks if k.uid not in claimed]
        if all_ks and not ks:
            continue  # its kernels are another call's
        claimed.update(k.uid for k in ks)
        used.add(o.uid)
        calls.append(_call(o, ks, "nccl annotation", coll, o.args))
    for o in tree.ops:
        if o.cat != CPU_OP or not o.name.startswith(C10D_PREFIX):
            continue
        if any(p.name.startswith(C10D_PREFIX) for p in o.ancestors()):
            continue
        coll = collective_of(o.name)
        if coll is None or coll.lower() in NOT_COLLECTIVE:
            continue
        ks = [k for k in o.subtree_kernels() if k.uid not in claimed]
        if not ks or any(d.uid in used for d in o.walk()):
            continue
        claimed.update(k.uid for k in ks)
        calls.append(_call(o, ks, "c10d op", coll, o.args))
    for g in tree.gpu:
        if g.uid in claimed:
            continue
        coll = collective_of(g.name)
        if coll is None:
            continue
        claimed.add(g.uid)
        c = _call(g, [g], "kernel name", coll, {})
        calls.append(c)
    return calls


__all__ = ["inferred_calls", "collective_of", "KERNEL_RX"]
