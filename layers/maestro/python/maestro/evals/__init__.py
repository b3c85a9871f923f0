"""Evals: scenarios, the lenses that grade them from real reads, and the metrics."""
