"""Statements of Wu & Gardner, *Understanding stochastic natural gradient variational inference* (seed 004): one module
per topic of the paper; shared helpers in the modules starting with an underscore."""
