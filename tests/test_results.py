"""Headline results as the notebooks record them (``gbai.studies.record``); publishing them is tests/test_publish.py."""

from __future__ import annotations

import pytest

from gbai.studies.results import MIMETYPE, STORED_DIGITS, record, record_range


def test_record_checks_its_input_and_formats_the_quoted_form():
    result = record("exp1.ratio", 0.6549, fmt=".2f", unit="ratio", figure="fig1a_experiment1", description="a ratio")
    assert (result.shown, result.value) == ("0.65", 0.6549)
    assert record("share", 0.125, fmt=".0%", description="a share").shown == "12%"
    assert record("count", 12345, fmt=",.0f", description="a count").shown == "12,345"
    bundle = result._repr_mimebundle_()
    assert bundle[MIMETYPE]["key"] == "exp1.ratio" and "0.65" in bundle["text/plain"]
    for key, value, fmt, description in [("Bad Key", 1.0, ".2f", "x"), ("k", float("nan"), ".2f", "x"),
                                         ("k", "1.0", ".2f", "x"), ("k", True, ".2f", "x"), ("k", 1.0, ".2q", "x"),
                                         ("k", 1.0, ".2f", " ")]:
        with pytest.raises(ValueError):
            record(key, value, fmt=fmt, description=description)


def test_significant_digits_and_ranges():
    assert [record(f"r{k}", value, fmt=".2r", description="d").shown
            for k, value in enumerate((1583.0, 240.4, 0.5671, 1.0, 0.01234))] == ["1600", "240", "0.57", "1.0", "0.012"]
    low, high = record_range("ratio", [3.0, 1.25, 2.0], fmt=".2f", description="a ratio")
    assert (low.key, low.shown, high.key, high.shown) == ("ratio.min", "1.25", "ratio.max", "3.00")
    with pytest.raises(ValueError, match="no values"):
        record_range("ratio", [], description="a ratio")


def test_a_stored_record_keeps_its_value_as_text():
    # JupyterLab saves JSON numbers in its own spelling (5.0 as 5): text survives a save unchanged.
    bundle = record("count", 5, fmt="d", description="a count")._repr_mimebundle_()[MIMETYPE]
    assert bundle["value"] == "5.0"


def test_the_stored_value_keeps_twelve_digits_and_the_quote_is_formatted_from_the_computed_value():
    # Two hosts whose rounding differs in a float's last bits store the same value.
    assert STORED_DIGITS == 12
    assert {record("limit", value, description="d").value for value in (1.1127613338453826, 1.1127613338453823)} == {
        1.11276133385}
    # 0.05 * 71 is 3.5500000000000003, quoted 3.6; formatted from the stored 3.55 it would read 3.5.
    result = record("misses", 0.05 * 71, fmt=".1f", description="d")
    assert (result.value, result.shown, result._repr_mimebundle_()[MIMETYPE]["value"]) == (3.55, "3.6", "3.55")
