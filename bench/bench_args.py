"""What the bench scripts that run lcrwmd on an index and a query file share."""
import argparse


def index_and_queries(doc):
    """A parser with --lcrwmd, --index, --queries and --data, described by doc's first line."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--lcrwmd", default="build/lcrwmd")
    p.add_argument("--index", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--data", default="../shared/data")
    return p
