#!/usr/bin/python3
"""Plots the JSON of `lcrwmd eval` (as written by bench/quality.sh) as PNG figures, and prints
the kNN summary as a Markdown table (the one in RESULTS.md).

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


COLORS = {"wcd": "tab:green", "lc-rwmd-one-sided": "tab:blue", "lc-rwmd": "tab:orange",
          "act-1": "tab:olive", "act-3": "tab:cyan", "act-7": "tab:pink", "ict": "tab:purple",
          "wmd": "tab:red"}


def knn(src, dst):
    runs = load(os.path.join(src, "*_knn_*.json"))
    corpora = sorted({n.split("_knn_")[0] for n in runs})
    cols = 3
    rows = (len(corpora) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.flat[len(corpora):]:
        ax.axis("off")
    for ax, corpus in zip(axes.flat, corpora):
        for method in COLORS:
            r = runs.get(f"{corpus}_knn_{method}")
            if r is None:
                continue
            ks = sorted(int(k) for k in r["errors"])
            ax.plot(ks, [100 * r["errors"][str(k)] for k in ks], marker=".",
                    color=COLORS[method], label=LABELS[method])
        any_run = runs[f"{corpus}_knn_wcd"]
        ax.set_title(f"{corpus} ({any_run['n_queries']} test x {any_run['n_docs']} train)",
                     fontsize=9)
        ax.set_xlabel("k")
        ax.set_ylabel("kNN test error (%)")
        ax.grid(alpha=0.3)
    handles = [plt.Line2D([], [], color=c, marker=".", label=LABELS[m]) for m, c in COLORS.items()]
    fig.legend(handles=handles, loc="upper center", ncol=8, fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(os.path.join(dst, "knn_error.png"), dpi=110)


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


def knn_table(src):
    runs = load(os.path.join(src, "*_knn_*.json"))
    print("| corpus | queries x docs | method | best k | error | error at k=1..19 (min-max) "
          "| seconds | EMD solves |")
    print("|---|---|---|---|---|---|---|---|")
    for corpus in sorted({n.split("_knn_")[0] for n in runs}):
        for method in LABELS:
            r = runs.get(f"{corpus}_knn_{method}")
            if r is None:
                continue
            errs = [100 * e for e in r["errors"].values()]
            solves = (f"{r['exact_refinements']:,} of {r['pairs']:,}"
                      if method == "wmd" else "")
            print(f"| {corpus} | {r['n_queries']} x {r['n_docs']} | {LABELS[method]} "
                  f"| {r['best_k']} | {100 * r['best_error']:.1f}% "
                  f"| {min(errs):.1f}-{max(errs):.1f}% | {r['seconds']:.2f} | {solves} |")


def bounds_table(src):
    runs = load(os.path.join(src, "*_act_bounds.json"))
    if not runs:
        return
    print()
    print("| corpus | queries x docs | bound | mean bound/WMD | min bound/WMD "
          "| top-10 WMD pairs pruned |")
    print("|---|---|---|---|---|---|")
    for name, r in runs.items():
        corpus = name[:-len("_act_bounds")]
        for b in r["bounds"]:
            print(f"| {corpus} | {r['queries']} x {r['docs']} | {b['bound']} "
                  f"| {b['mean_ratio']:.3f} | {b['min_ratio']:.3f} "
                  f"| {100 * b['top10_pruned_share']:.1f}% |")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    knn_table(src)
    bounds_table(src)
    knn(src, dst)
    overlap(src, dst)
    precision(src, dst)


if __name__ == "__main__":
    main()
