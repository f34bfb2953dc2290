"""plot_alignment (lcrwmd.plot_alignment): an Explanation's flow drawn with matplotlib."""
from __future__ import annotations


def plot_alignment(explanation, path=None, top: int = 30, ax=None):
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError("plot_alignment needs matplotlib: apt-get install python3-matplotlib "
                          "(or pip install matplotlib)") from e
    if path is not None and ax is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flows = explanation.flows[:top]
    left = sorted({f.query_word for f in flows})
    right = sorted({f.doc_word for f in flows})
    y_left = {w: i for i, w in enumerate(left)}
    y_right = {w: i for i, w in enumerate(right)}
    scale = max(len(left), len(right), 1)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, max(3.0, 0.28 * scale + 1.2)))
    costs = [f.cost for f in flows] or [0.0]
    norm = matplotlib.colors.Normalize(vmin=min(costs), vmax=max(max(costs), 1e-12))
    cmap = matplotlib.colormaps["viridis"]
    widest = max((f.mass for f in flows), default=1.0) or 1.0
    for f in flows:
        yl = y_left[f.query_word] * scale / max(len(left), 1)
        yr = y_right[f.doc_word] * scale / max(len(right), 1)
        ax.plot([0, 1], [yl, yr], color=cmap(norm(f.cost)), alpha=0.8,
                linewidth=0.5 + 8.0 * f.mass / widest, solid_capstyle="round")
    for w, i in y_left.items():
        ax.text(-0.02, i * scale / max(len(left), 1), w, ha="right", va="center", fontsize=9)
    for w, i in y_right.items():
        ax.text(1.02, i * scale / max(len(right), 1), w, ha="left", va="center", fontsize=9)
    ax.set_xlim(-0.45, 1.45)
    ax.set_ylim(scale, -1)
    ax.axis("off")
    shown = sum(f.mass * f.cost for f in flows)
    ax.set_title(f"{explanation.method} {explanation.distance:.4f} to {explanation.doc}: "
                 f"the {len(flows)} largest of {len(explanation.flows)} flows "
                 f"({100 * shown / explanation.distance if explanation.distance else 0:.0f}% "
                 "of the distance)\nline width: mass moved; colour: cost (viridis, low to high)",
                 fontsize=9)
    ax.text(-0.02, -0.8, "query", ha="right", fontsize=10, weight="bold")
    ax.text(1.02, -0.8, "document", ha="left", fontsize=10, weight="bold")
    if path is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(path, dpi=110)
    return ax
