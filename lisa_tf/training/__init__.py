"""Training engine shared by every model: strategy, precision, optimisers, losses, loop."""
