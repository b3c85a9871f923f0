"""Evals on the embedded stack: load scenarios, seed their world, run them through the eval
executor state machine and grade them from real reads (see ``evals/README.md``); and the
labeled sets through the real stages, with their metrics and plots (``labeled``, ``plots``)."""
