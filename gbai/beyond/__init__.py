"""Algorithms beyond the paper, delta-correct for any rewards in [0, 1].

``css_lucb_plus`` (CSS-LUCB with anytime bounds and targeted sampling), ``lma_glr``
(asymptotically optimal tracking with GLR stopping), ``betting`` (betting
e-values), and ``confidence_sequences``, the published time-uniform bounds they use.
"""
