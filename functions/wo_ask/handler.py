"""Step Functions task of the work order machine: wo_ask (see maestro.dispatch.steps)."""

from maestro.dispatch.entry import wo_ask as handler

__all__ = ["handler"]
