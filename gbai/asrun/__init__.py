"""The authors' as-run code, below the registry.

``variants``: the as-run rules of the paper's three algorithms as options, on one
compiled loop; ``instances``: the typed instances of the published figures. The
studies of the published figures (verdicts, staircase, counterfactual) sit above the
runs, in :mod:`gbai.studies.published`.
"""
