"""Step Functions task: persist (see maestro.pipeline.steps)."""

from maestro.pipeline.entry import persist as handler

__all__ = ["handler"]
