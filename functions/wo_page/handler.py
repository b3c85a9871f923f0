"""Step Functions task of the work order machine: wo_page (see maestro.dispatch.steps)."""

from maestro.dispatch.entry import wo_page as handler

__all__ = ["handler"]
