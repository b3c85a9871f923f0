"""The package pipeline's steps, one per Step Functions task."""
