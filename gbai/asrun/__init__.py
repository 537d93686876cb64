"""The published figures as the authors' research code drew them.

``variants``: the as-run rules of the paper's three algorithms as options, on one
compiled loop; ``instances``: the typed instances of the figures; ``published``:
the published points and the verdict, staircase and counterfactual analyses.
"""
