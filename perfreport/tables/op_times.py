"""Per-op kernel times: direct (launched by the op's own runtime calls) and subtree."""
from __future__ import annotations

import numpy as np

from perfreport.events import DRIVER, RUNTIME

LAUNCH = (RUNTIME, DRIVER)


class OpTimes:
    """``direct[uid]`` and ``subtree[uid]`` kernel time in µs, for every CPU event."""

    def __init__(self, tree):
        n = len(tree.ops)
        direct = np.zeros(n)
        subtree = np.zeros(n)
        for o in tree.ops:
            if o.kernels:
                direct[o.uid] = sum(k.dur for k in o.kernels)
        # post-order accumulation without recursion
        for root in tree.roots:
            stack = [(root, False)]
            while stack:
                o, done = stack.pop()
                if done:
                    s = direct[o.uid]
                    if o.children:
                        for c in o.children:
                            if c.cat not in LAUNCH:   # launches are already in direct[o]
                                s += subtree[c.uid]
                    subtree[o.uid] = s
                else:
                    stack.append((o, True))
                    if o.children:
                        stack.extend((c, False) for c in o.children)
        self.direct = direct
        self.subtree = subtree
