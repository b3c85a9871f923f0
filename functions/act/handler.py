"""Step Functions task: act (see maestro.pipeline.steps)."""

from maestro.pipeline.entry import act as handler

__all__ = ["handler"]
