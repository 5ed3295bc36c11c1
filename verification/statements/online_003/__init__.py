"""Statements of Chérief-Abdellatif, Alquier & Khan, *A generalization bound for online variational inference* (seed
003): one module per topic of the paper; shared helpers in the modules starting with an underscore."""
