"""Statements of Domke, Garrigos & Gower, *Provable convergence guarantees for black-box variational inference* (seed
000): one module per topic of the paper; shared helpers in the modules starting with an underscore."""
