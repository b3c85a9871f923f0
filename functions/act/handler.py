"""Step Functions task: act (see maestro.pipeline.act)."""

from maestro.pipeline.entry import act as handler

__all__ = ["handler"]
