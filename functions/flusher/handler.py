"""SQS debounce queue → the flusher (partial batch failures)."""

from maestro.ingest.flusher_entry import flusher_handler as handler

__all__ = ["handler"]
