"""RESULTS.md's ranking figures: the overlap with the exact WMD ranking and the precision at k
(`lcrwmd eval overlap / precision --json`), and the table of the bounds' tightness
(bench/act_bounds.py), from the JSON bench/quality.sh writes. report.py calls them."""
import glob
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {"wcd": "WCD", "lc-rwmd-one-sided": "LC-RWMD one-sided",
          "lc-rwmd": "RWMD (LC-RWMD, symmetric)", "act-1": "ACT-1", "act-3": "ACT-3",
          "act-7": "ACT-7", "ict": "ICT", "wmd": "WMD"}


def load(pattern):
    out = {}
    for path in sorted(glob.glob(pattern)):
        name = os.path.basename(path)[:-5]
        with open(path) as f:
            out[name] = json.load(f)
    return out


def overlap(src, dst):
    runs = load(os.path.join(src, "*_overlap_*.json"))
    if not runs:
        return
    corpora = sorted({n.split("_overlap_")[0] for n in runs})
    methods = sorted({n.split("_overlap_")[1] for n in runs})
    fig, axes = plt.subplots(len(corpora), len(methods),
                             figsize=(3.6 * len(methods), 3.0 * len(corpora)), squeeze=False)
    for row, corpus in enumerate(corpora):
        for col, method in enumerate(methods):
            ax = axes[row][col]
            r = runs.get(f"{corpus}_overlap_{method}")
            if r is None:
                ax.axis("off")
                continue
            ks = sorted(int(k) for k in r["shares"])
            for p, pct in enumerate(r["percents"]):
                ax.plot(ks, [100 * r["shares"][str(k)][p] for k in ks], marker=".",
                        label=f"in WMD top {pct:g}%")
            ax.set_xscale("log", base=2)
            ax.set_title(f"{corpus}: {LABELS.get(method, method)}", fontsize=9)
            ax.set_xlabel("top-k of the method")
            ax.set_ylabel("share of the top-k (%)")
            ax.set_ylim(0, 102)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(dst, "overlap.png"), dpi=110)


def precision(src, dst):
    runs = load(os.path.join(src, "*_precision_*.json"))
    corpora = sorted({n.split("_precision_")[0] for n in runs})
    if not corpora:
        return
    fig, axes = plt.subplots(1, len(corpora), figsize=(4 * len(corpora), 3.4), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        for name, r in runs.items():
            if not name.startswith(corpus + "_precision_"):
                continue
            method = name.split("_precision_")[1]
            ks = sorted(int(k) for k in r["precision"])
            ax.plot(ks, [r["precision"][str(k)] for k in ks], marker=".",
                    label=LABELS.get(method, method))
        ax.set_xscale("log", base=2)
        ax.set_title(corpus)
        ax.set_xlabel("k")
        ax.set_ylabel("precision at k (geo. mean over label-size groups)", fontsize=7)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(dst, "precision.png"), dpi=110)


def bounds_table(src):
    """Markdown lines: each bound's ratio to the WMD and the top-10 pairs it prunes."""
    runs = load(os.path.join(src, "*_act_bounds.json"))
    out = ["| corpus | queries x docs | bound | mean bound/WMD | min bound/WMD "
           "| top-10 WMD pairs pruned |", "|---|---|---|---|---|---|"]
    for name, r in runs.items():
        corpus = name[:-len("_act_bounds")]
        for b in r["bounds"]:
            out.append(f"| {corpus} | {r['queries']} x {r['docs']} | {b['bound']} "
                       f"| {b['mean_ratio']:.3f} | {b['min_ratio']:.3f} "
                       f"| {100 * b['top10_pruned_share']:.1f}% |")
    return out if runs else []
