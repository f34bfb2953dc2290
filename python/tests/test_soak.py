"""The kill -9 soak (bench/soak.py) for about a minute on the demo collection: clients adding,
replacing, deleting and searching while the server is killed at random and restarted; nothing
acknowledged is lost, no search names a document deleted by its generation, and the collection
answers as one build of its live documents. Its checker is first shown to catch a document
deleted behind the clients' back. Needs the built command line (LCRWMD_CLI)."""
import json
import os
import subprocess
import sys

import pytest

from test_serve import CLI

pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason="no lcrwmd command line built")

SOAK = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "soak.py")


def soak(tmp_path, *args):
    return subprocess.run([sys.executable, SOAK, "--work", str(tmp_path / "soak"), *args],
                          capture_output=True, text=True, timeout=600)


def test_the_checker_catches_a_document_deleted_behind_the_clients_back(tmp_path):
    r = soak(tmp_path, "--seconds", "12", "--kill-after", "2,5", "--sabotage")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "deleted where its acknowledged writes leave it live" in r.stdout, r.stdout


def test_nothing_acknowledged_is_lost_across_kills(tmp_path):
    out = tmp_path / "soak.json"
    r = soak(tmp_path, "--seconds", "45", "--kill-after", "3,8", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(out.read_text())
    assert result["failures"] == []
    assert result["restarts"] >= 4, result
    assert result["acknowledged_writes"] > 100 and result["searches"] > 20, result
