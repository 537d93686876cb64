"""Plotting helpers used by the notebooks: one :func:`savefig` and a few standard plots.

Figures are written to :func:`figures_dir` as PDF and PNG, with the data they show
written beside them as CSV. PDF and PNG metadata carry no timestamp, so the same
data give the same files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .paper.instances import EXPERIMENT_TITLES

__all__ = [
    "ALGORITHM_STYLES",
    "figures_dir",
    "legend_below",
    "panel_grid",
    "plot_allocation",
    "plot_grouped_bars",
    "plot_confidence_intervals",
    "plot_every_experiment",
    "plot_instance",
    "plot_paired_difference",
    "plot_sample_complexity",
    "plot_set_evolution",
    "readable_number",
    "savefig",
]

#: Colours and markers per algorithm, shared by every figure.
ALGORITHM_STYLES = {
    "css-lucb": {"color": "#1f77b4", "marker": "o", "label": "CSS-LUCB"},
    "ae": {"color": "#d62728", "marker": "s", "label": "Action Elimination"},
    "feasibility-then-bai": {"color": "#2ca02c", "marker": "^", "label": "Feasibility then BAI"},
    "css-lucb-plus": {"color": "#9467bd", "marker": "D", "label": "CSS-LUCB+"},
    "lma-glr": {"color": "#ff7f0e", "marker": "v", "label": "LMA-GLR"},
    "betting": {"color": "#17becf", "marker": "P", "label": "Betting-GBAI"},
}
_FALLBACK_COLORS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"]


def _style(algorithm: str, index: int) -> dict:
    if algorithm in ALGORITHM_STYLES:
        return ALGORITHM_STYLES[algorithm]
    return {"color": _FALLBACK_COLORS[index % len(_FALLBACK_COLORS)], "marker": "D", "label": algorithm}


def figures_dir() -> Path:
    """``$GBAI_FIGURES_DIR`` if set, else ``gbai-figures/`` in the working directory.

    JupyterLab starts a kernel in its notebook's folder, papermill in the folder the
    command runs in (where the large-sweeps page's command writes its notebook), so a
    run's figures land beside it. A notebook run with other parameters never replaces
    the committed ``figures/``: only ``make figures`` writes there, setting the variable.
    """
    if os.environ.get("GBAI_FIGURES_DIR"):
        return Path(os.environ["GBAI_FIGURES_DIR"])
    return Path.cwd() / "gbai-figures"


def savefig(fig, name: str, data: pd.DataFrame | None = None, directory: str | Path | None = None) -> list[Path]:
    """Write ``fig`` as ``name.pdf`` and ``name.png`` (and ``data`` as ``name.csv``).

    Returns the paths written. ``directory`` defaults to :func:`figures_dir`.
    """
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"figure name must be a plain file stem, got {name!r}")
    folder = Path(directory) if directory is not None else figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.pdf", folder / f"{name}.png"]
    fig.savefig(paths[0], bbox_inches="tight", metadata={"CreationDate": None, "ModDate": None})
    fig.savefig(paths[1], bbox_inches="tight", dpi=150, metadata={"Software": None})
    if data is not None:
        paths.append(folder / f"{name}.csv")
        data.to_csv(paths[-1], index=False, float_format="%.10g")
    return paths


def readable_number(value: float) -> str:
    """A float as a table should show it: thousands separated, four significant digits.

    ``2859987.0`` -> ``"2,859,987"``, ``1.23456`` -> ``"1.235"``, ``0.31`` -> ``"0.31"``,
    ``1e-10`` -> ``"1e-10"``. The notebooks pass it to pandas as
    ``pd.set_option("display.float_format", readable_number)``.
    """
    value = float(value)
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1e-4:
        return f"{value:.4g}"
    return f"{value:.2g}"


def panel_grid(n_panels: int, ncols: int = 3, panel_size: tuple[float, float] = (3.4, 3.0), **kwargs):
    """A figure of ``n_panels`` axes, at most ``ncols`` in a row: returns ``(fig, axes)``, ``axes`` a flat list.

    Panels beyond ``ncols`` wrap into further rows, so a figure stays narrow enough
    to be read at a text column's width; the unused cells of the last row are removed.
    ``kwargs`` go to :func:`matplotlib.pyplot.subplots` (``sharey=True``, ...).
    """
    import matplotlib.pyplot as plt

    if n_panels < 1:
        raise ValueError(f"a figure needs at least one panel, got {n_panels}")
    ncols = min(ncols, n_panels)
    nrows = -(-n_panels // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows), squeeze=False,
                             **kwargs)
    axes = list(grid.flat)
    for ax in axes[n_panels:]:
        ax.remove()
    return fig, axes[:n_panels]


def legend_below(fig, axes=None, ncol: int | None = None, fontsize: float = 9, **kwargs):
    """One legend for the whole figure, below its panels, outside the data.

    Collects the labelled artists of ``axes`` (default: every axes of ``fig``), drops
    duplicates and the panels' own legends, and lays the figure out first, so the
    legend sits under the x labels. Returns the legend.
    """
    axes = list(fig.axes if axes is None else np.ravel(axes))
    handles, labels = {}, []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles and not label.startswith("_"):
                handles[label] = handle
                labels.append(label)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    fig.tight_layout()
    if ncol is None:
        ncol = min(len(labels), 3) or 1
    return fig.legend([handles[label] for label in labels], labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                      ncol=ncol, fontsize=fontsize, frameon=False, **kwargs)


def _axes(ax, figsize=(6.0, 4.0)):
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize)
    return fig, ax


def plot_instance(instance, ax=None, title: str | None = None):
    """Attribute means (dots) against the threshold (dashed line), with arm means (bars).

    Infeasible arms are hatched; the best feasible arm is outlined.
    """
    fig, ax = _axes(ax)
    means = instance.means
    n_arms, n_attributes = means.shape
    arms = np.arange(n_arms)
    feasible = instance.feasible_mask
    bars = ax.bar(arms, instance.arm_means, width=0.6, color="#c6dbef", edgecolor="#08519c", label="arm mean")
    for i, bar in enumerate(bars):
        if not feasible[i]:
            bar.set_hatch("//")
            bar.set_facecolor("#fdd0a2")
            bar.set_edgecolor("#a63603")
        if instance.best_arm == i:
            bar.set_linewidth(2.5)
    offsets = np.linspace(-0.22, 0.22, n_attributes) if n_attributes > 1 else np.zeros(1)
    for j in range(n_attributes):
        ax.scatter(arms + offsets[j], means[:, j], s=22, color="black", zorder=3,
                   label="attribute means" if j == 0 else None)
    ax.axhline(instance.threshold, color="#a50f15", linestyle="--", label=f"threshold {instance.threshold:g}")
    ax.set_xticks(arms, [f"arm {i}" for i in arms])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean reward")
    ax.set_title(title if title is not None else (instance.label or "instance"))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=8, frameon=False)
    return fig, ax


def plot_grouped_bars(ax, table: pd.DataFrame, series: Sequence[str], groups: Sequence[str]) -> dict[str, str]:
    """Bars of ``table`` (one row per series, one column per group) side by side in each group, log scale.

    Series keep their colour of the default cycle by their place in ``series``, also
    when ``table`` lacks some of them (they leave a gap); a group's label breaks at its
    first space. Returns the colour of each series, for a legend.
    """
    import matplotlib.pyplot as plt

    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    positions = np.arange(len(groups))
    width = 0.8 / len(series)
    for k, label in enumerate(series):
        if label in table.index:
            ax.bar(positions + (k - len(series) / 2 + 0.5) * width, table.loc[label].reindex(list(groups)), width,
                   label=label, color=colors[k])
    ax.set_xticks(positions, [group.replace(" ", "\n", 1) for group in groups], fontsize=8)
    ax.set_yscale("log")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return dict(zip(series, colors))


_LIMIT_NAMES = {"kinf": "K_inf of the Beta rewards", "bernoulli": "Bernoulli kl"}


def _limit_label(summary: pd.DataFrame, reference: str) -> str:
    """``T*(μ)·kl(δ, 1−δ)``, with the divergence of ``T*`` when the summary names it."""
    divergences = set(summary.get("limit_divergence", pd.Series(dtype=object)).dropna())
    if reference == "T_star_kl" and len(divergences) == 1:
        return f"limit T*(μ)·kl(δ, 1−δ), {_LIMIT_NAMES.get(divergences.pop(), '')}"
    if reference == "T_star_kl_bernoulli":
        return "T*(μ)·kl(δ, 1−δ), Bernoulli kl"
    return "T*(μ)·kl(δ, 1−δ)"


def plot_sample_complexity(
    summary: pd.DataFrame,
    x: str = "H_id",
    ax=None,
    algorithms: Sequence[str] | None = None,
    reference: str | None = None,
    reference_label: str | None = None,
    logy: bool = True,
    title: str | None = None,
    group: str = "algorithm",
    group_label: str = "",
):
    """Mean samples with 95% intervals against ``x``, one line per algorithm.

    ``summary`` needs the columns ``algorithm``, ``x``, ``mean_samples``, ``ci95_low``
    and ``ci95_high`` (as returned by :func:`gbai.summarize` plus an ``x``
    column). ``reference`` names an optional column drawn as a dotted black line, e.g.
    the lower bound ``T*·kl`` (one per group when ``group`` is not the algorithm).
    Its default label names the divergence of the limit when the summary has the
    ``limit_divergence`` column of :func:`gbai.simulation.run_experiment`.
    ``group`` selects the column that separates the lines; ``group_label`` prefixes
    its values in the legend (e.g. ``"N = "``).
    """
    fig, ax = _axes(ax)
    names = list(algorithms) if algorithms is not None else list(dict.fromkeys(summary[group]))
    for index, name in enumerate(names):
        rows = summary[summary[group] == name].sort_values(x)
        style = dict(_style(name, index)) if group == "algorithm" else {
            "color": _FALLBACK_COLORS[index % len(_FALLBACK_COLORS)], "marker": "os^Dv"[index % 5],
            "label": f"{group_label}{name}"}
        error = np.vstack([rows["mean_samples"] - rows["ci95_low"], rows["ci95_high"] - rows["mean_samples"]])
        ax.errorbar(rows[x], rows["mean_samples"], yerr=error, color=style["color"], marker=style["marker"],
                    markersize=5, capsize=3, label=style["label"])
    if reference is not None:
        if reference_label is None:
            reference_label = _limit_label(summary, reference)
        parts = [summary] if group == "algorithm" else [rows for _, rows in summary.groupby(group, sort=False)]
        for index, rows in enumerate(parts):
            rows = rows.drop_duplicates(x).sort_values(x)
            ax.plot(rows[x], rows[reference], color="black", linestyle=":", marker=".",
                    label=reference_label if index == 0 else None)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel({"H_id": "hardness index $H_{id}$",
                   "H_id_feasible_competitor": "hardness index, runner-up among feasible arms"}.get(x, x))
    ax.set_ylabel("samples to stop (mean, 95% CI)")
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
    return fig, ax


def plot_every_experiment(summaries: dict[str, pd.DataFrame], titles: dict[str, str] = EXPERIMENT_TITLES,
                          reference_label: str = "limit T*(μ)·kl(δ, 1−δ)\n(K_inf of the Beta rewards)"):
    """Samples against the limit on each paper experiment, one panel each, the legend in the last cell.

    ``summaries`` maps an experiment's name to its :func:`gbai.sweep_experiment` summary.
    A table with several sizes (varying N or M) has one point per instance, placed on a
    log axis at its limit ``T*·kl(δ, 1−δ)``; the others are drawn against ``x``.
    """
    import matplotlib.pyplot as plt
    import matplotlib.ticker as ticker

    fig, axes = plt.subplots(2, 3, figsize=(8.4, 5.8))
    for index, (ax, (name, rows)) in enumerate(zip(axes.flat, summaries.items())):
        if rows["size"].notna().any():
            plot_sample_complexity(rows.assign(point=rows["T_star_kl"]), x="point", reference="T_star_kl", ax=ax,
                                   reference_label=reference_label)
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 3, 5)))
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            ax.set_xlabel("limit T*(μ)·kl(δ, 1−δ)")
        else:
            plot_sample_complexity(rows, x="x", reference="T_star_kl", ax=ax, reference_label=reference_label)
            ax.set_xlabel("x")
        ax.set_title(titles[name], fontsize=10)
        ax.set_ylabel("mean samples" if index % 3 == 0 else "")
        ax.tick_params(labelsize=8)
        handles, labels = ax.get_legend_handles_labels()
        ax.get_legend().remove()
    for ax in axes.flat[len(summaries):]:
        ax.axis("off")
    axes.flat[-1].legend(handles, labels, loc="center", fontsize=9, frameon=False)
    fig.tight_layout()
    return fig


def plot_confidence_intervals(state, ax=None, title: str | None = None, arms: Sequence[int] | None = None):
    """Draw one round of the step engine: attribute and arm confidence intervals.

    Attribute intervals ``[L_ij, U_ij]`` are thin lines (red when the threshold is
    above ``U_ij``, i.e. the pair left ``F_t^A``); arm intervals ``[L_i, U_i]`` are
    thick bars. Markers flag the leader ``i_t`` (star) and the competitor ``c_t``
    (diamond); arms of the potential set ``P_t`` get a shaded background.
    """
    fig, ax = _axes(ax, figsize=(7.0, 4.0))
    sets = state.sets
    n_arms, n_attributes = state.means.shape
    shown = list(arms) if arms is not None else list(range(n_arms))
    width = 0.7
    for position, i in enumerate(shown):
        if sets.potential_set[i]:
            ax.axvspan(position - 0.45, position + 0.45, color="#fff7bc", zorder=0)
        offsets = np.linspace(-width / 2, width / 2, n_attributes + 2)[1:-1]
        for j in range(n_attributes):
            color = "#a50f15" if not sets.feasible_attribute_set[i, j] else (
                "#238b45" if sets.perfectly_feasible_attribute_set[i, j] else "#6b6b6b")
            ax.vlines(position + offsets[j], state.pair_lower[i, j], state.pair_upper[i, j], color=color, lw=1.2)
            ax.plot(position + offsets[j], state.means[i, j], ".", color=color, ms=4)
        ax.vlines(position, state.arm_lower[i], state.arm_upper[i], color="#08519c", lw=5, alpha=0.55)
        ax.plot(position, state.arm_means[i], "_", color="#08519c", ms=16, mew=2)
        if i == sets.best_feasible_arm:
            ax.plot(position, -0.08, marker="*", color="#08519c", ms=12, clip_on=False)
        if i == sets.competitor_arm:
            ax.plot(position, -0.08, marker="D", color="#d94801", ms=8, clip_on=False)
    ax.axhline(state.threshold, color="#a50f15", linestyle="--", lw=1)
    ax.set_xticks(range(len(shown)), [f"arm {i}" for i in shown])
    ax.set_ylim(-0.15, 1.2)
    ax.set_ylabel("confidence intervals")
    ax.set_title(title if title is not None else f"round t = {state.t}")
    return fig, ax


def plot_allocation(weights: np.ndarray, ax=None, title: str | None = None, cmap: str = "viridis"):
    """A heat map of an allocation over arms (rows) and attributes (columns)."""
    import matplotlib.pyplot as plt

    fig, ax = _axes(ax, figsize=(4.5, 3.5))
    weights = np.asarray(weights, dtype=float)
    image = ax.imshow(weights, cmap=cmap, vmin=0.0, aspect="auto")
    n_arms, n_attributes = weights.shape
    ax.set_xticks(range(n_attributes), [f"attr {j}" for j in range(n_attributes)])
    ax.set_yticks(range(n_arms), [f"arm {i}" for i in range(n_arms)])
    peak = weights.max() if weights.size else 0.0
    for i in range(n_arms):
        for j in range(n_attributes):
            ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if weights[i, j] < 0.6 * peak else "black")
    plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        ax.set_title(title)
    return fig, ax


def plot_set_evolution(trace: pd.DataFrame, n_arms: int, ax=None, title: str | None = None):
    """Membership of each arm in ``F_t``, ``F_Pt`` and ``P_t`` over the rounds of a trace.

    One horizontal band per arm: light when the arm is in ``F_t``, dark when it is in
    ``F_Pt``; a thin line marks membership of ``P_t``; dots mark the rounds in which
    the arm was pulled (thinned to at most ~400 per arm). The x axis is logarithmic in
    ``t`` and the stopping round is marked.
    """
    fig, ax = _axes(ax, figsize=(7.0, 0.9 + 0.55 * n_arms))
    t = trace["t"].to_numpy()
    edges = np.append(t, t[-1] + 1)
    for i in range(n_arms):
        feasible = trace["feasible_set"].map(lambda members, i=i: i in members).to_numpy()
        perfect = trace["perfectly_feasible_set"].map(lambda members, i=i: i in members).to_numpy()
        potential = trace["potential_set"].map(lambda members, i=i: i in members).to_numpy()
        pulled = trace["pulled_arms"].map(lambda members, i=i: i in members).to_numpy()
        level = np.where(perfect, 2, np.where(feasible, 1, 0))
        colors = np.array(["#f0f0f0", "#9ecae1", "#08519c"])[level]
        ax.broken_barh([(edges[k], edges[k + 1] - edges[k]) for k in range(len(t))], (i - 0.35, 0.7),
                       facecolors=colors, linewidth=0)
        ax.plot(np.where(potential, t, np.nan), np.full(len(t), i + 0.4), color="#e6550d", lw=2)
        hits = t[pulled]
        if hits.size > 400:
            hits = hits[np.unique(np.geomspace(1, hits.size, 400).astype(int) - 1)]
        ax.plot(hits, np.full(hits.size, i), "|", color="black", ms=6, alpha=0.6)
    ax.axvline(t[-1], color="#a50f15", linestyle="--", lw=1.2)
    ax.text(t[-1], n_arms - 0.45, " stop", color="#a50f15", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_yticks(range(n_arms), [f"arm {i}" for i in range(n_arms)])
    ax.set_ylim(-0.6, n_arms - 0.2)
    ax.set_xlabel("round t")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color="#9ecae1", label="in $F_t$"), Patch(color="#08519c", label="in $F_{Pt}$"),
               Line2D([], [], color="#e6550d", lw=2, label="in $P_t$"),
               Line2D([], [], color="black", marker="|", ls="", label="pulled")]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(title if title is not None else "confidence sets over the rounds")
    return fig, ax


def plot_paired_difference(comparison: pd.DataFrame, summary: pd.DataFrame, x: str = "H_id", ax=None,
                           title: str | None = None):
    """Extra samples of each baseline over the reference, in percent, with paired 95% intervals.

    ``comparison`` is :func:`gbai.paired_comparison`'s table (reference minus other,
    per instance); ``summary`` supplies the ``x`` value of each instance. A point at
    +2% means the baseline needed 2% more samples than the reference on that
    instance; an interval that crosses 0 leaves the order undecided. Curves that lie
    on top of each other on a log axis of samples come apart here.
    """
    fig, ax = _axes(ax)
    positions = summary.drop_duplicates("instance").set_index("instance")[x]
    reference = next(column[len("mean "):] for column in comparison.columns
                     if column.startswith("mean ") and column != "mean other")
    for index, (other, rows) in enumerate(comparison.groupby("other", sort=False)):
        rows = rows.assign(position=rows["instance"].map(positions)).sort_values("position")
        scale = 100.0 / rows[f"mean {reference}"]
        middle = -rows["difference"] * scale
        error = np.vstack([middle - (-rows["ci95_high"] * scale), -rows["ci95_low"] * scale - middle])
        style = _style(other, index)
        ax.errorbar(rows["position"], middle, yerr=error, color=style["color"], marker=style["marker"],
                    markersize=5, capsize=3, label=style["label"])
    ax.axhline(0.0, color=_style(reference, 0)["color"], linewidth=1.5, label=_style(reference, 0)["label"])
    ax.set_xlabel({"H_id": "hardness index $H_{id}$",
                   "H_id_feasible_competitor": "hardness index, runner-up among feasible arms"}.get(x, x))
    ax.set_ylabel(f"samples above {_style(reference, 0)['label']} (%)")
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return fig, ax
