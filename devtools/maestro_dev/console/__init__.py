"""`maestro console`: the eval playground (seed 002) as a local web app over one controller."""
