"""Algorithms beyond the paper, delta-correct for any rewards in [0, 1].

``css_lucb_plus`` (CSS-LUCB with anytime bounds and targeted sampling), ``lma_glr``
(asymptotically optimal tracking with a mixture-GLR stop), ``betting`` (betting
e-values); ``confidence_sequences``, published time-uniform bounds, and
``mixtures``, Krichevsky-Trofimov mixture e-values, the tests they build on;
``references``, Track-and-Stop and Top Two for plain best-arm identification (``M = 1``),
the yardsticks of the near-limit study.
"""
