"""Figures readable at the book's column width, and tables with readable numbers."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from gbai.plotting import legend_below, panel_grid, readable_number  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("panels, rows, columns", [(1, 1, 1), (3, 1, 3), (4, 2, 3), (5, 2, 3), (6, 2, 3)])
def test_panels_wrap_into_rows_of_at_most_three(panels, rows, columns):
    fig, axes = panel_grid(panels)
    try:
        assert len(axes) == len(fig.axes) == panels
        grid = {(ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start) for ax in axes}
        assert max(row for row, _ in grid) + 1 == rows and max(column for _, column in grid) + 1 == columns
        width, height = fig.get_size_inches()
        assert width / height <= 3.5
    finally:
        plt.close(fig)


def test_one_legend_below_the_panels_replaces_theirs():
    fig, axes = panel_grid(2)
    try:
        for ax in axes:
            ax.plot([0, 1], [0, 1], label="shared")
            ax.plot([0, 1], [1, 0], label=f"only {id(ax)}")
            ax.legend()
        legend = legend_below(fig)
        assert all(ax.get_legend() is None for ax in axes)
        assert [text.get_text() for text in legend.get_texts()].count("shared") == 1
        fig.canvas.draw()
        box = legend.get_window_extent()
        assert all(box.y1 <= ax.get_window_extent().y0 for ax in axes), "the legend overlaps the panels"
    finally:
        plt.close(fig)


@pytest.mark.parametrize("value, shown", [(2859987.0, "2,859,987"), (1e-10, "1e-10"), (1.23456, "1.235"),
                                          (0.31, "0.31"), (0.0, "0"), (-1500.4, "-1,500"), (float("nan"), "NaN")])
def test_numbers_in_tables_are_readable(value, shown):
    assert readable_number(value) == shown


@pytest.mark.parametrize("png", sorted((ROOT / "figures").glob("*.png")), ids=lambda path: path.stem)
def test_every_figure_is_at_most_about_three_times_as_wide_as_high(png):
    from PIL import Image

    width, height = Image.open(png).size
    assert width / height <= 3.2, f"{png.name} is {width}x{height} ({width / height:.2f}:1)"
