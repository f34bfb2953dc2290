#!/usr/bin/python3
"""Plots the JSON of `lcrwmd eval` (as written by bench/quality.sh) as PNG figures.

    scripts/plot_results.py bench/results/quality docs/figures

Needs Debian's python3-matplotlib (scripts/install-deps.sh --results).
"""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {"wcd": "WCD", "rwmd": "RWMD (LC-RWMD, symmetric)",
          "lc-rwmd-one-sided": "LC-RWMD one-sided", "wmd": "WMD", "lc-rwmd": "RWMD (LC-RWMD, symmetric)"}


def load(pattern):
    out = {}
    for path in sorted(glob.glob(pattern)):
        name = os.path.basename(path)[:-5]
        with open(path) as f:
            out[name] = json.load(f)
    return out


def knn(src, dst):
    runs = load(os.path.join(src, "*_knn_*.json"))
    corpora = sorted({n.split("_knn_")[0] for n in runs})
    fig, axes = plt.subplots(1, len(corpora), figsize=(4 * len(corpora), 3.4), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        for name, r in runs.items():
            if not name.startswith(corpus + "_knn_"):
                continue
            method = name.split("_knn_")[1]
            ks = sorted(int(k) for k in r["errors"])
            ax.plot(ks, [100 * r["errors"][str(k)] for k in ks], marker=".",
                    label=LABELS.get(method, method))
        ax.set_title(corpus)
        ax.set_xlabel("k")
        ax.set_ylabel("kNN test error (%)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(dst, "knn_error.png"), dpi=110)


def overlap(src, dst):
    runs = load(os.path.join(src, "*_overlap_*.json"))
    if not runs:
        return
    fig, axes = plt.subplots(1, len(runs), figsize=(4 * len(runs), 3.4), squeeze=False)
    for ax, (name, r) in zip(axes[0], runs.items()):
        corpus, method = name.split("_overlap_")
        ks = sorted(int(k) for k in r["shares"])
        for p, pct in enumerate(r["percents"]):
            ax.plot(ks, [100 * r["shares"][str(k)][p] for k in ks], marker=".",
                    label=f"in WMD top {pct:g}%")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{corpus}: {LABELS.get(method, method)}", fontsize=9)
        ax.set_xlabel("top-k of the method")
        ax.set_ylabel("share (%)")
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


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    knn(src, dst)
    overlap(src, dst)
    precision(src, dst)


if __name__ == "__main__":
    main()
