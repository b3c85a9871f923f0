"""Step Functions task: dispose (see maestro.pipeline.steps)."""

from maestro.pipeline.entry import dispose as handler

__all__ = ["handler"]
