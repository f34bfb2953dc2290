"""The examples of docs/python.md run as written, and print what the page says they print (the
shared corpora where ../shared/data holds them, as in CI)."""
import contextlib
import io
import os
import re

import pytest

SOURCE = os.environ.get("LCRWMD_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(SOURCE, "..", "shared", "data")


def example(heading):
    """The first python block after `heading` in docs/python.md, and the block printed after it."""
    with open(os.path.join(SOURCE, "docs", "python.md"), encoding="utf-8") as f:
        page = f.read()
    section = page[page.index(heading):]
    code, printed = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    return code, printed


@pytest.mark.skipif(not os.path.isdir(os.path.join(DATA, "corpora", "bbcsport")),
                    reason="no shared corpora")
def test_the_knn_example_prints_what_the_page_says():
    code, printed = example("## kNN classification of BBC Sport in a few lines")
    assert 'data = "../shared/data"' in code
    code = code.replace('data = "../shared/data"', f"data = {DATA!r}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/python.md", "exec"), {})
    assert out.getvalue() == printed
