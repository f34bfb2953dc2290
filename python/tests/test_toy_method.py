"""A method registered from a folder of its own (tests/methods/toy: toy_scale * wcd^toy_power)
reaches every front end without a line of them changed: the command line's flags and help, the
service's JSON fields and /info, Python's keyword arguments and lcrwmd.methods(), with their
defaults, and each front end's refusal of a value out of range naming the parameter. The
binaries are the project's own front ends linked with the toy (LCRWMD_TOY_CLI, and the package
under LCRWMD_TOY_PYTHONPATH), so the test runs them as processes of their own."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from test_serve import DEMO, TEXT, Server

TOY_CLI = os.environ.get("LCRWMD_TOY_CLI", "")
TOY_PYTHONPATH = os.environ.get("LCRWMD_TOY_PYTHONPATH", "")

pytestmark = pytest.mark.skipif(not (os.path.exists(TOY_CLI) and TOY_PYTHONPATH),
                                reason="no toy-method binaries built")

QUERIES = os.path.join(DEMO, "queries.tsv")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("toy") / "demo.idx")
    subprocess.run([TOY_CLI, "build", "--docs", os.path.join(DEMO, "train.tsv"), "--output", path]
                   + TEXT, check=True, capture_output=True)
    return path


def search(index, *flags):
    """query -> [(doc, distance)] from the toy command line's search."""
    run = subprocess.run([TOY_CLI, "search", "--index", index, "--queries", QUERIES, "--k", "5",
                          *TEXT, *flags], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    top = {}
    for line in run.stdout.splitlines():
        qid, _, doc, dist = line.split("\t")
        top.setdefault(qid, []).append((doc, float(dist)))
    return top


def test_the_command_line_lists_and_takes_its_parameters(index):
    described = json.loads(subprocess.run([TOY_CLI, "methods", "--format", "json"], check=True,
                                          capture_output=True, text=True).stdout)
    toy = next(m for m in described if m["name"] == "toy")
    assert [(p["name"], p["flag"], p["type"], p["default"]) for p in toy["parameters"]] == [
        ("toy_power", "--toy-power", "integer", 1), ("toy_scale", "--toy-scale", "number", 2.5)]
    assert toy["directions"] == ["symmetric"] and not toy["runs_on_gpu"]
    helped = subprocess.run([TOY_CLI, "search", "--help"], check=True, capture_output=True,
                            text=True).stdout
    assert "--toy-power" in helped and "toy: the power the centroids' distance" in helped
    wcd = search(index, "--method", "wcd")
    for flags, power, scale in (([], 1, 2.5), (["--toy-power", "2", "--toy-scale", "3"], 2, 3.0)):
        toy = search(index, "--method", "toy", *flags)
        assert toy.keys() == wcd.keys()
        for q in wcd:
            assert [d for d, _ in toy[q]] == [d for d, _ in wcd[q]]
            np.testing.assert_allclose([x for _, x in toy[q]],
                                       [scale * x ** power for _, x in wcd[q]], rtol=1e-5)
    for flag, value in (("--toy-power", "5"), ("--toy-power", "1.5"), ("--toy-scale", "-1")):
        run = subprocess.run([TOY_CLI, "search", "--index", index, "--queries", QUERIES,
                              "--method", "toy", flag, value, *TEXT], capture_output=True,
                             text=True)
        assert run.returncode != 0 and flag in run.stderr, run.stderr


def test_the_service_takes_its_fields(index):
    server = Server(index, text=TEXT, cli=TOY_CLI)
    try:
        status, info = server.request("/info")
        assert status == 200 and "toy" in info["methods"]
        toy = next(m for m in info["method_details"] if m["name"] == "toy")
        assert [p["name"] for p in toy["parameters"]] == ["toy_power", "toy_scale"]
        body = {"queries": ["goal"], "k": 3, "method": "toy"}
        status, plain = server.request("/search", body)
        assert status == 200
        status, wcd = server.request("/search", dict(body, method="wcd"))
        status, powered = server.request("/search", dict(body, toy_power=3, toy_scale=1))
        assert status == 200
        for a, w, p in zip(plain["results"][0]["neighbors"], wcd["results"][0]["neighbors"],
                           powered["results"][0]["neighbors"]):
            assert a["id"] == w["id"] == p["id"]
            assert a["distance"] == pytest.approx(2.5 * w["distance"], rel=1e-5)
            assert p["distance"] == pytest.approx(w["distance"] ** 3, rel=1e-5)
        for field, value in (("toy_power", 0), ("toy_power", 2.5), ("toy_scale", "big")):
            status, error = server.request("/search", dict(body, **{field: value}))
            assert status == 400 and error["field"] == field, error
    finally:
        assert server.stop() == 0


def test_python_takes_its_keyword_arguments():
    script = """
import inspect, json, sys
import lcrwmd
from demo_data import EMB, STOP, DEMO, read_tsv
import os
rows = read_tsv(os.path.join(DEMO, "train.tsv"))
index = lcrwmd.Index.build(lcrwmd.Embeddings.load(EMB), [r[2] for r in rows], stopwords=STOP)
toy = next(m for m in lcrwmd.methods() if m["name"] == "toy")
signature = inspect.signature(lcrwmd.Index.search).parameters
out = {"parameters": toy["parameters"],
       "defaults": {n: signature[n].default for n in ("toy_power", "toy_scale")},
       "doc": "toy_power (toy; integer, default 1)" in lcrwmd.Index.search.__doc__}
wcd = index.pairwise(["goal scored"], method="wcd")
out["default"] = float(abs(index.pairwise(["goal scored"], method="toy") - 2.5 * wcd).max())
out["given"] = float(abs(index.pairwise(["goal scored"], method="toy", toy_power=2,
                                        toy_scale=1.0) - wcd ** 2).max())
errors = {}
for kwargs in ({"toy_power": 9}, {"toy_scale": -2.0}, {"toy_powr": 2}):
    try:
        index.search(["goal"], method="toy", **kwargs)
    except Exception as e:
        errors[next(iter(kwargs))] = [type(e).__name__, str(e)]
out["errors"] = errors
print(json.dumps(out))
"""
    env = dict(os.environ, PYTHONPATH=TOY_PYTHONPATH + os.pathsep + os.path.dirname(__file__))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert [p["name"] for p in out["parameters"]] == ["toy_power", "toy_scale"]
    assert out["defaults"] == {"toy_power": 1, "toy_scale": 2.5} and out["doc"]
    assert out["default"] < 1e-4 and out["given"] < 1e-4
    assert out["errors"]["toy_power"][0] == "Error" and "toy_power" in out["errors"]["toy_power"][1]
    assert out["errors"]["toy_scale"][0] == "Error" and "toy_scale" in out["errors"]["toy_scale"][1]
    assert out["errors"]["toy_powr"][0] == "TypeError"
