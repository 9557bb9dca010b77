"""Re-export of the event records (defined in :mod:`perfreport.events`)."""

from perfreport.events import *  # noqa: F401,F403
from perfreport.events import GpuEvent, Op  # noqa: F401
