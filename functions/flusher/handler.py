"""SQS debounce queue → the flusher (partial batch failures)."""

from maestro.ingest.entry import flusher_handler as handler

__all__ = ["handler"]
