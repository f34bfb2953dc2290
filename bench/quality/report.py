#!/usr/bin/python3
"""RESULTS.md's quality tables and figures from the JSON of knn_runs.py, baselines.py and
clusters.py: k chosen on the validation split (the smallest k with the least error), the test
error at that k; the anchors' published figures beside ours; clustering ARI/NMI.

    bench/quality/report.py bench/results/quality docs/figures > tables.md

Needs Debian's python3-matplotlib (scripts/install-deps.sh --results).
"""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import corpora  # noqa: E402
import ranking  # noqa: E402

# (weighting, method) in the tables' order; "base" are the scikit-learn baselines.
ROWS = [("base", "bow-l1", "BoW, L1"), ("base", "tfidf-l1", "TF-IDF, L1"),
        ("base", "tfidf-cos", "TF-IDF, cosine"),
        ("tf", "wcd", "WCD"), ("tfidf", "wcd", "WCD, TF-IDF"),
        ("tf", "lc-rwmd-one-sided", "LC-RWMD one-sided"),
        ("tf", "lc-rwmd", "RWMD"), ("tfidf", "lc-rwmd", "RWMD, TF-IDF"),
        ("tf", "act-1", "ACT-1"), ("tfidf", "act-1", "ACT-1, TF-IDF"),
        ("tf", "ict", "ICT"), ("tfidf", "ict", "ICT, TF-IDF"),
        ("tf", "wmd", "WMD"), ("tfidf", "wmd", "WMD, TF-IDF")]
# Published test error (%), GoogleNews word2vec: Kusner et al. 2015; Sato et al. 2022.
ANCHORS = {
    "Kusner et al. 2015, WMD": {"bbcsport": 4.6, "twitter": 29, "classic": 2.8, "r8": 3.5,
                                "amazon": 7.4, "20news": 27},
    "Sato et al. 2022, WMD": {"bbcsport": 5.1, "twitter": 29.6, "classic": 2.9, "r8": 4.0,
                              "amazon": 7.4, "20news": 26.8},
    "Sato et al. 2022, BoW L1": {"bbcsport": 3.9, "twitter": 30.0, "classic": 4.1, "r8": 5.7,
                                 "amazon": 10.4, "20news": 29.1},
    "Sato et al. 2022, TF-IDF L1": {"bbcsport": 2.8, "twitter": 28.9, "classic": 3.3, "r8": 5.5,
                                    "amazon": 8.0, "20news": 25.9},
    "Sato et al. 2022, WMD TF-IDF": {"bbcsport": 3.3, "twitter": 28.3, "classic": 2.7, "r8": 4.0,
                                     "amazon": 6.6, "20news": 24.1},
}
OURS_BESIDE = [("tf", "wmd", "here, WMD"), ("base", "bow-l1", "here, BoW L1"),
               ("base", "tfidf-l1", "here, TF-IDF L1"), ("tfidf", "wmd", "here, WMD TF-IDF")]
CLUSTERED = [("wcd", "WCD"), ("lc-rwmd", "RWMD"), ("act-1", "ACT-1"),
             ("wmd", "WMD"), ("base_tfidf-l1-kmedoids", "TF-IDF L1 + k-medoids"),
             ("base_tfidf-kmeans", "TF-IDF + k-means")]


def load(src, folder="knn"):
    runs = {}
    for path in glob.glob(os.path.join(src, folder, "*_*_*_*.json")):
        corpus, weighting, method, split = os.path.basename(path)[:-5].split("_")
        with open(path) as f:
            runs[corpus, weighting, method, split] = json.load(f)
    return runs


def chosen(runs, corpus, weighting, method):
    """(k chosen on validation, test error at k) or None where a run is missing."""
    valid, test = (runs.get((corpus, weighting, method, s)) for s in ("valid", "test"))
    if valid is None or test is None:
        return None
    k = min(range(1, 20), key=lambda k: (valid["errors"][str(k)], k))
    return k, 100 * test["errors"][str(k)]


def row(name, cells):
    return f"| {name} | " + " | ".join(cells) + " |"


def mean(result, key):
    """Over the seeds of a clustering result."""
    return sum(r[key] for r in result["runs"]) / len(result["runs"])


def knn_table(runs, present):
    out = ["| method | " + " | ".join(present) + " |", "|---|" + "---|" * len(present)]
    sizes = []
    for c in present:
        t = runs[c, "tf", "wcd", "test"]
        sample = " (sample)" if c in corpora.TEST_EVERY else ""
        sizes.append(f"{t['n_queries']} x {t['n_docs']}{sample}")
    out.append("| test queries x training documents | " + " | ".join(sizes) + " |")
    best = {c: min(r[1] for r in (chosen(runs, c, w, m) for w, m, _ in ROWS) if r) for c in present}
    for w, m, name in ROWS:
        cells = []
        for c in present:
            r = chosen(runs, c, w, m)
            cell = "" if r is None else f"{r[1]:.1f} ({r[0]})"
            cells.append(f"**{cell}**" if r and r[1] == best[c] else cell)
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def change_table(before, after, present, title, base):
    """Each method's error before -> after a change (vectors trained on the training split, a
    metric learned from its labels), the family's best of each (before: every method; after:
    those run), and the best baseline of `base`, the shared runs (the baselines need no vectors
    or metric)."""
    cols = [c for c in present if any(k[0] == c for k in after)]
    out = [f"| test error (%), {title} | " + " | ".join(cols) + " |",
           "|---|" + "---|" * len(cols)]
    family = [(w, m, n) for w, m, n in ROWS if w != "base" and m != "lc-rwmd-one-sided"]
    ran = [r for r in family if any(k[1:3] == r[:2] for k in after)]
    for w, m, name in ran:
        cells = []
        for c in cols:
            a, b = chosen(before, c, w, m), chosen(after, c, w, m)
            cells.append(f"{a[1]:.1f} -> {b[1]:.1f}" if a and b else "")
        out.append(row(name, cells))

    def best(runs, rows, c):
        got = [r[1] for r in (chosen(runs, c, w, m) for w, m, _ in rows) if r]
        return min(got) if got else float("nan")

    out.append(row("**family's best**", [f"**{best(before, family, c):.1f} -> "
                                         f"{best(after, ran, c):.1f}**" for c in cols]))
    baselines = [r for r in ROWS if r[0] == "base"]
    out.append(row("best baseline (TF-IDF or BoW)", [f"{best(base, baselines, c):.1f}"
                                                     for c in cols]))
    return out


def learning_table(src, folder):
    """Each metric's learning (`lcrwmd learn --json`, knn_runs.py --metric learned): the
    documents, the epochs of each stage, the held-out error, the time and where it went."""
    out = ["| corpus, weighting | trained on / held out | epochs (centroid + transport) | "
           "held-out error (%, the last stage's vote), identity -> learned | seconds | "
           "candidates / distances / gradients / held-out votes (s) | "
           "transports, Sinkhorn iterations each |",
           "|---|---|---|---|---|---|---|"]
    for c in corpora.CORPORA:
        for w in ("tf", "tfidf"):
            path = os.path.join(src, folder, f"{c}_{w}_learn.json")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                j = json.load(f)
            stages = [e["stage"] for e in j["epochs"]]
            work = j["work"]
            per = work["sinkhorn_iterations"] / work["transports"] if work["transports"] else 0
            out.append(row(f"{c}, {w}", [
                f"{j['train_documents']} / {j['held_out_documents']}",
                f"{stages.count('centroid')} + {stages.count('transport')}",
                f"{100 * j['unsupervised_error']:.1f} -> {100 * j['held_out_error']:.1f}",
                f"{j['seconds']:.0f}",
                " / ".join(f"{work[k + '_seconds']:.0f}"
                           for k in ("candidates", "distance", "gradient", "held_out")),
                f"{work['transports']}, {per:.0f}"]))
    return out


def anchors_table(runs):
    cols = ["bbcsport", "twitter", "classic", "r8", "amazon", "20news"]
    out = ["| test error (%) | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for name, figures in ANCHORS.items():
        out.append(f"| {name} | " + " | ".join(str(figures[c]) for c in cols) + " |")
    for w, m, name in OURS_BESIDE:
        cells = [chosen(runs, c, w, m) for c in cols]
        out.append(row(name, ["" if r is None else f"{r[1]:.1f}" for r in cells]))
    return out


def seconds_table(runs, present):
    out = ["| seconds, test set (2 threads) | " + " | ".join(present) + " |",
           "|---|" + "---|" * len(present)]
    for w, m, name in ROWS:
        cells = [runs.get((c, w, m, "test")) for c in present]
        out.append(row(name, ["" if r is None else f"{r['seconds']:.1f}" for r in cells]))
    return out


def cluster_table(src):
    out = ["| corpus (documents, k) | " + " | ".join(n for _, n in CLUSTERED) + " |",
           "|---|" + "---|" * len(CLUSTERED)]
    results = {}
    for path in glob.glob(os.path.join(src, "cluster", "*.json")):
        corpus, method = os.path.basename(path)[:-5].split("_", 1)
        with open(path) as f:
            results[corpus, method] = json.load(f)
    for c in corpora.CORPORA:
        if (c, "wcd") not in results:
            continue
        head = results[c, "wcd"]
        cells = []
        for m, _ in CLUSTERED:
            r = results.get((c, m))
            cells.append("" if r is None else f"{mean(r, 'ari'):.2f} / {mean(r, 'nmi'):.2f}")
        out.append(f"| {c} ({head['n_docs']}, {head['k']}) | " + " | ".join(cells) + " |")
    return out, results


def plot_curves(runs, present, dst):
    styles = {("tf", "wcd"): "tab:green", ("tf", "lc-rwmd"): "tab:orange",
              ("tf", "act-1"): "tab:olive", ("tf", "ict"): "tab:purple", ("tf", "wmd"): "tab:red",
              ("tfidf", "wmd"): "darkred", ("base", "bow-l1"): "gray",
              ("base", "tfidf-l1"): "black", ("base", "tfidf-cos"): "tab:blue"}
    names = {(w, m): n for w, m, n in ROWS}
    cols = 4
    rows = (len(present) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.1 * rows), squeeze=False)
    for ax in axes.flat[len(present):]:
        ax.axis("off")
    for ax, c in zip(axes.flat, present):
        for (w, m), color in styles.items():
            t = runs.get((c, w, m, "test"))
            if t is None:
                continue
            ks = range(1, 20)
            ax.plot(ks, [100 * t["errors"][str(k)] for k in ks], color=color,
                    linestyle="--" if w == "base" else "-", linewidth=1)
            k, e = chosen(runs, c, w, m)
            ax.plot([k], [e], marker="o", color=color, markersize=4)
        ax.set_title(c, fontsize=9)
        ax.set_xlabel("k")
        ax.set_ylabel("test error (%)")
        ax.grid(alpha=0.3)
    handles = [plt.Line2D([], [], color=col, linestyle="--" if w == "base" else "-",
                          label=names[w, m]) for (w, m), col in styles.items()]
    fig.legend(handles=handles, loc="upper center", ncol=5, fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(os.path.join(dst, "knn_error.png"), dpi=110)


def plot_clusters(results, dst):
    present = [c for c in corpora.CORPORA if (c, "wcd") in results]
    fig, ax = plt.subplots(figsize=(9, 3.2))
    width = 0.8 / len(CLUSTERED)
    for j, (m, name) in enumerate(CLUSTERED):
        ys = [mean(results[c, m], "ari") if (c, m) in results else 0 for c in present]
        ax.bar([i + j * width for i in range(len(present))], ys, width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(present))], present)
    ax.set_ylabel("ARI (mean of 3 seeds)")
    ax.legend(fontsize=7, ncol=3)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(os.path.join(dst, "clustering.png"), dpi=110)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    runs = load(src)
    present = [c for c in corpora.CORPORA if (c, "tf", "wcd", "test") in runs]
    lines = ["## kNN test error (%), k chosen on the held-out 20% of training (k in brackets)", ""]
    lines += knn_table(runs, present) + ["", "## Beside the anchors", ""] + anchors_table(runs)
    trained = load(src, "knn_trained")
    if trained:
        lines += ["", "## Vectors trained on each training split", ""]
        lines += change_table(runs, trained, present, "shared -> trained vectors", runs)
    for folder, before, title in [("knn_learned", runs, "shared vectors, unsupervised -> learned"),
                                  ("knn_trained_learned", trained,
                                   "trained vectors, unsupervised -> learned")]:
        learned = load(src, folder)
        if learned:
            lines += ["", f"## A metric learned from each fit split's labels ({title.split(',')[0]})",
                      ""]
            lines += change_table(before, learned, present, title, runs)
            lines += ["", "Learning each metric (2 threads):", ""] + learning_table(src, folder)
    lines += ["", "## Search time of the test set", ""] + seconds_table(runs, present)
    table, results = cluster_table(src)
    lines += ["", "## Clustering: ARI / NMI against the labels (mean of 3 seeds)", ""] + table
    lines += ["", "## The bounds against the WMD", ""]
    lines += ranking.bounds_table(os.path.join(src, "ranking"))
    print("\n".join(lines))
    os.makedirs(dst, exist_ok=True)
    plot_curves(runs, present, dst)
    plot_clusters(results, dst)
    ranking.overlap(os.path.join(src, "ranking"), dst)
    ranking.precision(os.path.join(src, "ranking"), dst)


if __name__ == "__main__":
    main()
