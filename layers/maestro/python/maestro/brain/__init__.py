"""The brain: pre-check, reasoning, the manage agent and the bounded ``decide()`` primitive."""
