"""What the bench scripts that run lcrwmd share: an index and a query file's flags, a process's
resident memory."""
import argparse


def rss_mib(pid):
    """A process's resident memory (VmRSS), in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def index_and_queries(doc):
    """A parser with --lcrwmd, --index, --queries and --data, described by doc's first line."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--lcrwmd", default="build/lcrwmd")
    p.add_argument("--index", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--data", default="../shared/data")
    return p
