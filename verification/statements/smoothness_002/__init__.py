"""Statements of Domke, *Provable smoothness guarantees for black-box variational inference* (seed 002): one module per
topic of the paper; shared helpers in the modules starting with an underscore."""
