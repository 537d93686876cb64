"""The one-sided binomial test behind every delta-correctness test by error rate.

A delta-correct rule errs with probability at most delta, so its error count in ``n``
independent runs is at most Binomial(n, delta) (stochastically). The test fails when
the count reaches the critical count ``c``, the smallest with P(Bin(n, delta) >= c) <= alpha:
a rule erring at exactly delta fails with probability at most ``alpha``, and a rule
erring at 1.2 delta fails with probability P(Bin(n, 1.2 delta) >= c), the test's power.
"""

from scipy import stats

#: The false-failure probability of one check (one instance, rule, reward and delta).
ALPHA = 1e-3
#: The power every check must have against a rule erring at 1.2 delta.
POWER = 0.9


def critical_count(n: int, delta: float, alpha: float = ALPHA) -> int:
    """The smallest ``c`` with P(Bin(n, delta) >= c) <= alpha."""
    # isf gives the smallest k with P(X > k) <= alpha, so c = k + 1.
    return int(stats.binom.isf(alpha, n, delta)) + 1


def power(n: int, delta: float, alpha: float = ALPHA) -> float:
    """P(Bin(n, 1.2 delta) >= c): how often the test rejects a rule erring at 1.2 delta."""
    return float(stats.binom.sf(critical_count(n, delta, alpha) - 1, n, 1.2 * delta))


def most_errors(n: int, delta: float, alpha: float = ALPHA) -> int:
    """The most errors ``n`` runs at ``delta`` may show; refuses a check with less than :data:`POWER`."""
    if power(n, delta, alpha) < POWER:
        raise ValueError(f"{n} runs at delta = {delta} reject a rule erring at {1.2 * delta:g} with probability "
                         f"{power(n, delta, alpha):.3f} only (alpha = {alpha}): use more runs")
    return critical_count(n, delta, alpha) - 1
