"""Step Functions task of the work order machine: wo_judge (see maestro.dispatch.steps)."""

from maestro.dispatch.entry import wo_judge as handler

__all__ = ["handler"]
