"""Step Functions task of the work order machine: wo_assign (see maestro.dispatch.steps)."""

from maestro.dispatch.entry import wo_assign as handler

__all__ = ["handler"]
