#!/usr/bin/env bash
# The correctness checks a lent GPU runs first, in a few minutes: the GPU tests (GPU results
# against the CPU backend), compute-sanitizer's memcheck, racecheck and synccheck on a subset of
# them, then the CLI's results on the GPU beside the CPU's for every method the GPU runs, both
# directions, top-k, range search, distance matrices, kNN evaluation, shards and a collection
# with deletions (searched, and served while it takes documents), on the bundled demo data and
# a synthetic index. Logs go to LOG_DIR; the exit status counts the failed steps.
#   bench/gpu_check.sh BUNDLE_DIR LOG_DIR      (BUNDLE_DIR from bench/gpu_bundle.sh)
# Environment: SANITIZE=0 skips compute-sanitizer. LOG_DIR holds a log per step (~80 files).
# Option lists ($dq, $sq, $side) split into words on purpose; the functions run through step.
# shellcheck disable=SC2086,SC2317
set -uo pipefail
cd "$(dirname "$0")/.." || exit
B=$(realpath "$1")
LOG=$(realpath "$2")
mkdir -p "$LOG"
export LD_LIBRARY_PATH="$B/lib:/usr/local/cuda-13.0/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=0
step() {  # step NAME SECONDS COMMAND...: runs it (a function too) with a time limit, its output in LOG/NAME.log
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" bash -c '"$@"' _ "$@" >"$LOG/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc $rc, $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || { failed=$((failed + 1)); tail -n 25 "$LOG/$name.log"; }
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$B/lcrwmd" devices
step gputests 120 "$B/lcrwmd_tests" --gtest_filter='*Gpu*:Backend*' --gtest_brief=1
grep -E "PASSED|FAILED|SKIPPED" "$LOG/gputests.log" | head -n 20

if [ "${SANITIZE:-1}" != 0 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  tests="$B/lcrwmd_tests --gtest_brief=1"
  step memcheck 150 "$cs" --tool memcheck --error-exitcode 3 $tests \
    --gtest_filter='Cases/GpuVsCpu.*n31*:Cases/GpuVsCpu.*_n1_*:Cases/GpuVsCpu.*act1*n1021_b64*:Gpu.*:-Gpu.Bf16GivesF32sBits'
  step racecheck 90 "$cs" --tool racecheck --error-exitcode 3 $tests \
    --gtest_filter='Cases/GpuVsCpu.*n31*:Cases/GpuVsCpu.act2*n1_*'
  step synccheck 60 "$cs" --tool synccheck --error-exitcode 3 $tests \
    --gtest_filter='Cases/GpuVsCpu.*n31_b64*'
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$LOG"/{memcheck,racecheck,synccheck}.log
fi

# The CLI on both backends: same neighbours (ties aside) and distances within 2e-4 relative.
W=$(mktemp -d)
demo=data/demo
"$B/lcrwmd" build --embeddings $demo/embeddings.bin --docs $demo/train.tsv \
  --stopwords $demo/stop_words.txt --output "$W/demo.idx" >/dev/null 2>&1
"$B/lcrwmd" synth --docs 4000 --vocab 20000 --words-per-doc 40 --dim 300 --queries 48 \
  --queries-output "$W/synth_q.tsv" --output "$W/synth.idx" >/dev/null 2>&1
"$B/lcrwmd" synth --docs 4000 --vocab 20000 --words-per-doc 40 --dim 300 \
  --output "$W/shard.idx" --shards 3 >/dev/null 2>&1
compare() {  # compare CPU.tsv GPU.tsv: top-k lists
  python3 - "$@" <<'PY'
import sys
def read(p):
    out = {}
    for line in open(p):
        q, r, d, x = line.rstrip("\n").split("\t")
        out.setdefault(q, []).append((d, float(x)))
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
assert a.keys() == b.keys(), "different queries"
worst, bad = 0.0, []
for q in a:
    da, db = dict(a[q]), dict(b[q])
    for d in set(da) & set(db):
        worst = max(worst, abs(da[d] - db[d]) / max(1.0, abs(da[d])))
    last = max(x for _, x in a[q]) if a[q] else 0
    for d in set(da) ^ set(db):  # only near the k-th distance (a tie) may lists differ
        x = da.get(d, db.get(d))
        if abs(x - last) > 2e-4 * max(1.0, abs(last)):
            bad.append((q, d, x))
    if len(a[q]) != len(b[q]):
        bad.append((q, "list length", len(a[q]), len(b[q])))
print(f"{len(a)} queries, max rel diff {worst:.2e}, {len(bad)} differences beyond ties {bad[:3]}")
sys.exit(1 if bad or worst > 2e-4 else 0)
PY
}
cli() {  # cli NAME ARGS...: search on both backends, then compare
  local name=$1
  shift
  "$B/lcrwmd" search "$@" --backend cpu --output "$W/$name.cpu.tsv" 2>"$LOG/cli_$name.cpu.err" &&
    "$B/lcrwmd" search "$@" --backend cuda --output "$W/$name.gpu.tsv" 2>"$LOG/cli_$name.gpu.err" &&
    compare "$W/$name.cpu.tsv" "$W/$name.gpu.tsv"
}
pairwise() {
  "$B/lcrwmd" pairwise $dq --method "$1" --backend cpu --output "$W/p.cpu.npy" &&
    "$B/lcrwmd" pairwise $dq --method "$1" --backend cuda --output "$W/p.gpu.npy" &&
    python3 -c "
import numpy as np, sys
a, b = np.load('$W/p.cpu.npy'), np.load('$W/p.gpu.npy')
r = np.abs(a - b).max() / max(1.0, np.abs(a).max())
print(a.shape, 'max rel diff', r); sys.exit(0 if a.shape == b.shape and np.isfinite(b).all() and r < 2e-4 else 1)"
}
knn() {
  for be in cpu cuda; do
    "$B/lcrwmd" eval knn $dq --k 1,3,5 --backend $be 2>/dev/null | grep -v "s)$" >"$W/knn.$be"
  done
  cat "$W/knn.cpu"
  cmp "$W/knn.cpu" "$W/knn.cuda"
}
# A collection of two segments with deletions (the GPU searches k + the deleted, drops them).
head -n 80 $demo/train.tsv >"$W/first.tsv"
tail -n +81 $demo/train.tsv >"$W/more.tsv"
"$B/lcrwmd" build --embeddings $demo/embeddings.bin --docs "$W/first.tsv" \
  --stopwords $demo/stop_words.txt --output "$W/col" --collection >/dev/null 2>&1
"$B/lcrwmd" add --index "$W/col" --docs "$W/more.tsv" >/dev/null 2>&1
cut -f1 $demo/train.tsv | sed -n '3p;40p;41p;100p' >"$W/gone.txt"
"$B/lcrwmd" delete --index "$W/col" --ids "$W/gone.txt" >/dev/null 2>&1
serve_collection() {  # lcrwmd serve taking documents, on each backend: same answers
  cp -r "$W/col" "$W/col_cpu" && cp -r "$W/col" "$W/col_cuda" && python3 - <<'PY'
import json, os, signal, subprocess, sys, urllib.request
B, W, demo = os.environ["B"], os.environ["W"], os.environ["demo"]
rows = [l.rstrip("\n").split("\t", 2) for l in open(f"{demo}/queries.tsv")]
def start(backend):
    p = subprocess.Popen([f"{B}/lcrwmd", "serve", "--index", f"{W}/col_{backend}", "--port", "0",
                          "--embeddings", f"{demo}/embeddings.bin", "--backend", backend],
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    print(backend, line.strip())
    return p, "http://127.0.0.1:" + line.strip().rsplit(":", 1)[1]
def call(url, path, body=None, method=None):
    req = urllib.request.Request(url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())
answers = {}
for backend in ("cpu", "cuda"):
    p, url = start(backend)
    try:
        call(url, "/documents", {"documents": [{"id": "new-" + i, "label": l, "text": t}
                                               for i, l, t in rows[:5]]})
        call(url, "/documents/new-" + rows[0][0], method="DELETE")
        answers[backend] = [call(url, "/search", {"queries": [t for _, _, t in rows], "k": 10,
                                                  "method": m})["results"]
                            for m in ("lc-rwmd", "wcd", "act")]
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=120) == 0, backend
worst, bad = 0.0, 0
for a, b in zip(answers["cpu"], answers["cuda"]):
    for ra, rb in zip(a, b):
        na, nb = ra["neighbors"], rb["neighbors"]
        bad += [n["id"] for n in na[:9]] != [n["id"] for n in nb[:9]]
        for x, y in zip(na, nb):
            worst = max(worst, abs(x["distance"] - y["distance"]) / max(1.0, abs(x["distance"])))
print(f"serve over a collection, cpu against cuda: {bad} lists differ, max rel diff {worst:.2e}")
sys.exit(1 if bad or worst > 2e-4 else 0)
PY
}
dq="--index $W/demo.idx --queries $demo/queries.tsv --embeddings $demo/embeddings.bin"
sq="--index $W/synth.idx --queries $W/synth_q.tsv"
export B W LOG demo dq
export -f compare cli pairwise knn serve_collection
for m in wcd rwmd lc-rwmd act ict; do
  for side in "" --one-sided; do
    [ "$m" = wcd ] && [ -n "$side" ] && continue
    step "cli_demo_$m$side" 60 cli "demo_$m$side" $dq --method $m $side --k 20
    step "cli_synth_$m$side" 90 cli "synth_$m$side" $sq --method $m $side --k 10
  done
done
step cli_act3 60 cli act3 $sq --method act --act-steps 3 --k 10
for m in lc-rwmd wcd act; do
  step "cli_collection_$m" 60 cli "collection_$m" --index "$W/col" --queries $demo/queries.tsv \
    --embeddings $demo/embeddings.bin --method $m --k 20
done
step cli_collection_one_sided 60 cli collection_one_sided --index "$W/col" \
  --queries $demo/queries.tsv --embeddings $demo/embeddings.bin --one-sided --k 20
step serve_collection 120 serve_collection
step cli_range 60 cli range $dq --max-distance 9.5 --k 50
step cli_shards 90 cli shards --index "$W/shard.0.idx" --index "$W/shard.1.idx" \
  --index "$W/shard.2.idx" --queries "$W/synth_q.tsv" --k 10
step cli_batch1 60 cli batch1 $sq --batch 1 --k 10 --device-memory 64
for m in wcd rwmd lc-rwmd act ict; do step "pairwise_$m" 60 pairwise $m; done
step eval_knn 60 knn
grep -h "queries, max rel\|max rel diff" "$LOG"/cli_*.log "$LOG"/pairwise_*.log "$LOG"/serve_*.log
rm -rf "$W"
echo "== $failed step(s) failed"
exit "$failed"
