"""The bundled demo corpus (a BBC Sport slice with its 300-d embeddings) and the command line,
for the tests."""
import csv
import os
import subprocess

SOURCE = os.environ.get("LCRWMD_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("LCRWMD_CLI", os.path.join(SOURCE, "build", "lcrwmd"))
DEMO = os.path.join(SOURCE, "data", "demo")
EMB = os.path.join(DEMO, "embeddings.bin")
STOP = os.path.join(DEMO, "stop_words.txt")


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [row for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]


def cli(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout
