"""Step Functions task of the work order machine: wo_gather (see maestro.dispatch.steps)."""

from maestro.dispatch.entry import wo_gather as handler

__all__ = ["handler"]
