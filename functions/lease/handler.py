"""Step Functions task: lease (see maestro.pipeline.lease)."""

from maestro.pipeline.entry import lease as handler

__all__ = ["handler"]
