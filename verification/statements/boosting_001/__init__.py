"""Statements of Locatello et al., *Boosting variational inference: an optimization perspective* (seed 001): one module
per topic of the paper; shared helpers in the modules starting with an underscore."""
