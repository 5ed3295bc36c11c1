"""The statements: one package per paper, named by its subject, one module per topic of the paper; importing a
module registers its statements and errata (the runner imports them all, recursively).  What each statement and
erratum states (title, source, kind, the protocol methods it uses; an erratum's printed and corrected forms) is its
row in the package's ``catalog.toml`` (:mod:`refvi.verification.catalog`); the modules hold the executable checks.

* :mod:`.convergence_000` -- Domke, Garrigos & Gower, convergence of black-box VI (seed 000)
* :mod:`.boosting_001` -- Locatello et al., boosting VI (seed 001)
* :mod:`.smoothness_002` -- Domke, smoothness of black-box VI (seed 002)
* :mod:`.online_003` -- Chérief-Abdellatif, Alquier & Khan, online VI (seed 003)
* :mod:`.ngvi_004` -- Wu & Gardner, stochastic natural-gradient VI (seed 004)

Modules whose name starts with an underscore hold the helpers and instances shared by a package's topics.
"""
