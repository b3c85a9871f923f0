"""The pure domain core: models, the closed vocabulary, consensus, dispose, the memory window.

Nothing here does I/O or reads a clock: time comes in with the package, the model's answers come
in as samples, and every function gives the same output for the same input.
"""
