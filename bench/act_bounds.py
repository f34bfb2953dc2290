#!/usr/bin/python3
"""How close each lower bound comes to the exact WMD, and how many top-10 WMD pairs it prunes.

    bench/act_bounds.py --index bbcsport.idx --queries test.tsv [--data ../shared/data]
                        [--queries-sample 40] [--json F]

For the first N test documents against the whole index: the distance matrices of symmetric
RWMD, ACT-1, ACT-3, ACT-7, ICT and WMD (`lcrwmd pairwise`), then per bound the mean and
minimum of bound / WMD over the pairs, and the share of pairs whose bound already exceeds the
query's 10th-smallest WMD (pairs a top-10 search never needs to solve). Needs numpy.
"""
import json
import os
import subprocess
import tempfile

import numpy as np

from bench_args import index_and_queries

METHODS = [("RWMD", ["--method", "lc-rwmd"]), ("ACT-1", ["--method", "act", "--act-steps", "1"]),
           ("ACT-3", ["--method", "act", "--act-steps", "3"]),
           ("ACT-7", ["--method", "act", "--act-steps", "7"]), ("ICT", ["--method", "ict"])]


def main():
    p = index_and_queries(__doc__)
    p.add_argument("--queries-sample", type=int, default=40)
    p.add_argument("--json")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sample = os.path.join(tmp, "queries.tsv")
        opener = ["zcat", "-f", a.queries]
        lines = subprocess.run(opener, check=True, capture_output=True).stdout.splitlines(True)
        with open(sample, "wb") as f:
            f.writelines(lines[:a.queries_sample])

        def matrix(args):
            out = os.path.join(tmp, "m.npy")
            subprocess.run([a.lcrwmd, "pairwise", "--index", a.index, "--queries", sample,
                            "--stopwords", os.path.join(a.data, "stop_words.txt"),
                            "--embeddings", os.path.join(a.data, "embeddings", "cbow300.bin"),
                            "--output", out] + args, check=True, capture_output=True)
            return np.load(out).astype(np.float64)

        wmd = matrix(["--method", "wmd"])
        kth = np.sort(wmd, axis=1)[:, 9:10]
        positive = wmd > 0
        rows = []
        for name, args in METHODS:
            bound = matrix(args)
            ratio = bound[positive] / wmd[positive]
            rows.append({"bound": name, "mean_ratio": float(ratio.mean()),
                         "min_ratio": float(ratio.min()),
                         "above_wmd_pairs": int((bound > wmd * (1 + 1e-5) + 1e-6).sum()),
                         "top10_pruned_share": float((bound > kth).mean())})
    print(f"{a.index}: {wmd.shape[0]} queries x {wmd.shape[1]} documents")
    print(f"{'bound':8} {'mean bound/WMD':>15} {'min':>7} {'top-10 pruned':>14}")
    for r in rows:
        print(f"{r['bound']:8} {r['mean_ratio']:15.3f} {r['min_ratio']:7.3f} "
              f"{100 * r['top10_pruned_share']:13.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"index": a.index, "queries": int(wmd.shape[0]),
                       "docs": int(wmd.shape[1]), "bounds": rows}, f, indent=1)


if __name__ == "__main__":
    main()
