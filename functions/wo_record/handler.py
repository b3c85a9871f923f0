"""Step Functions task of the work order machine: wo_record (see maestro.dispatch.steps)."""

from maestro.dispatch.entry import wo_record as handler

__all__ = ["handler"]
