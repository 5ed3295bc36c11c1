"""Independent oracles: numpy / scipy / sympy / mpmath only, never refvi or refvi.kernels.

Each oracle reaches a number by another road than the kernel it checks: symbolic algebra (:mod:`.symbolic`),
quadrature (:mod:`.quadrature`), exact enumeration over discrete bases (:mod:`.discrete`), closed forms
(e.g. :mod:`.charfun`).
"""
