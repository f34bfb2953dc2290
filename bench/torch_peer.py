#!/usr/bin/env python3
"""The PyTorch reference for the CUDA backend: one-sided LC-RWMD as anyone would write it in ten
lines of PyTorch, on random data of an index's shape, timed on the same GPU as lcrwmd_bench gpu.

    python3 bench/torch_peer.py --preset set1 --merge-into bench/results/gpu_set1.json

The script (per batch of queries of h words each, E the v x m vocabulary, X the n x v CSR):
    d = |E|^2 - 2 E T^T + |T|^2, clamped at 0;  Z = d.view(v, batch, h).amin(2).sqrt()
    D = X @ Z;  topk(D, 10, smallest)
Needs PyTorch with CUDA (the GPU machine's python3 has it; the project's build does not).
"""
import argparse
import os
import json
import statistics
import time

import torch

PRESETS = {  # the paper's Set 1 and Set 2 (DESIGN.md), as lcrwmd synth makes them
    "set1": dict(n=1_000_000, v=452_058, m=300, h=107.5),
    "set2": dict(n=2_800_000, v=292_492, m=300, h=27.5),
}


def random_problem(n, v, m, h, gen):
    dev = "cuda"
    E = torch.randn(v, m, device=dev, generator=gen)
    lengths = torch.randint(int(h) - 10, int(h) + 12, (n,), device=dev, generator=gen)
    crow = torch.zeros(n + 1, dtype=torch.int64, device=dev)
    crow[1:] = torch.cumsum(lengths, 0)
    nnz = int(crow[-1])
    cols = torch.randint(0, v, (nnz,), device=dev, generator=gen)
    vals = torch.rand(nnz, device=dev, generator=gen)
    X = torch.sparse_csr_tensor(crow, cols, vals, size=(n, v))
    return E, X


def lc_rwmd_topk(E, En, X, words, k=10):
    batch, h = words.shape
    T = E[words.reshape(-1)]
    d = En[:, None] - 2.0 * (E @ T.T) + (T * T).sum(1)[None, :]
    Z = d.clamp_min_(0).view(E.shape[0], batch, h).amin(2).sqrt()
    D = X @ Z
    return torch.topk(D, k, dim=0, largest=False)


def median_ms(fn, reps):
    fn()  # warm-up: cuBLAS heuristics, the caching allocator
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(1e3 * (time.perf_counter() - t))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=PRESETS, default="set1")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--merge-into", help="add the figures, and lcrwmd's ratios to them, to this "
                    "lcrwmd_bench gpu JSON")
    args = ap.parse_args()
    p = PRESETS[args.preset]
    gen = torch.Generator(device="cuda").manual_seed(1)
    E, X = random_problem(p["n"], p["v"], p["m"], p["h"], gen)
    En = (E * E).sum(1)
    h = round(p["h"])
    out = {"device": torch.cuda.get_device_name(), "preset": args.preset, "torch": torch.__version__}
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        tag = "_tf32" if tf32 else ""
        single = torch.randint(0, p["v"], (1, h), device="cuda", generator=gen)
        out["torch_single" + tag + "_ms"] = median_ms(lambda: lc_rwmd_topk(E, En, X, single), args.reps)
        batch = torch.randint(0, p["v"], (64, h), device="cuda", generator=gen)
        ms = median_ms(lambda: lc_rwmd_topk(E, En, X, batch), max(3, args.reps // 3))
        out["torch_batch64" + tag + "_qps"] = 64e3 / ms
        del batch
        torch.cuda.empty_cache()
    for key, value in out.items():
        print(f"  {key:40s} {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if args.merge_into:
        merge(args.merge_into, out)


def merge(path, torch_figures):
    with open(path) as f:
        ours = json.load(f)
    for key, value in torch_figures.items():
        if key.startswith("torch_"):
            ours[key] = value
    ratios = {
        "speedup_vs_torch_single": ("torch_single_ms", "single_one_sided_ms", True),
        "speedup_vs_torch_single_tf32": ("torch_single_tf32_ms", "single_one_sided_ms", True),
        "speedup_vs_torch_batch64": ("torch_batch64_qps", "batch64_one_sided_qps", False),
        "speedup_vs_torch_batch64_tf32": ("torch_batch64_tf32_qps", "batch64_one_sided_qps", False),
    }
    for name, (theirs, mine, is_time) in ratios.items():
        if theirs in ours and mine in ours and ours[mine] and ours[theirs]:
            ours[name] = ours[theirs] / ours[mine] if is_time else ours[mine] / ours[theirs]
            print(f"  {name:40s} {ours[name]:.2f}x")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(ours, f, indent=1)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
