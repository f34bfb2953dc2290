#!/usr/bin/python3
"""Retrieval tasks with relevance judgements, from data every Debian machine has.

Each task is a folder with docs.tsv (id<TAB>label<TAB>text, what `lcrwmd build` reads) and
queries.tsv (the id of its one relevant document<TAB><TAB>the query's text): a query has exactly
one right answer, the document it was written for.

  man-commands     sections 1, 6 and 8 of the installed man pages: a page's NAME line (what
                   `whatis` prints) against the pages' DESCRIPTION sections
  man-library      the same for sections 2-5 and 7 (system calls, C library, files, overviews;
                   Debian's manpages-dev): held out of all tuning
  debian-packages  package synopses against the packages' long descriptions (apt's
                   Translation-en; `apt-get update -o Acquire::Languages=en` fetches it): held
                   out of all tuning

Usage: make_tasks.py OUT_DIR [--docs N] [--queries N]. The same machine, the same files.
"""
import argparse
import glob
import gzip
import hashlib
import os
import re
import subprocess
import sys

MIN_DOC_TOKENS = 30   # a description too short to search
MIN_QUERY_TOKENS = 3  # a synopsis of one or two words says little more than the name


def tokens(text):
    return re.findall(r"[A-Za-z0-9]+", text)


def clean(text):
    return re.sub(r"\s+", " ", text).strip()


# ---- man pages --------------------------------------------------------------------------

ROFF_ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),   # font changes
    (re.compile(r"\\s[-+]?\d"), ""),                # size changes
    (re.compile(r"\\\(em|\\\(en"), " - "),
    (re.compile(r"\\\((lq|rq|dq)"), '"'),
    (re.compile(r"\\\((oq|cq|aq)"), "'"),
    (re.compile(r"\\\(.."), " "),
    (re.compile(r"\\\*\(..|\\\*\[[^\]]*\]|\\\*."), ""),
    (re.compile(r"\\[-e]"), "-"),
    (re.compile(r"\\[&|^%:c ]"), ""),
    (re.compile(r"\\."), ""),
]


def unroff(line):
    for pattern, repl in ROFF_ESCAPES:
        line = pattern.sub(repl, line)
    return line


def sections(source):
    """{heading: [text lines]} of a roff man page (man or mdoc macros)."""
    out, current = {}, None
    for raw in source.splitlines():
        if raw.startswith(('.\\"', "'\\\"", '.\\#')):
            continue
        m = re.match(r'^\.(SH|Sh)\s+"?([^"]*)"?', raw)
        if m:
            current = m.group(2).strip().upper()
            out.setdefault(current, [])
            continue
        if current is None:
            continue
        if raw.startswith((".", "'")):
            m = re.match(r"^[.'](\w+)\s*(.*)$", raw)
            if not m:
                continue
            macro, args = m.groups()
            if macro in ("Nm", "Nd", "B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB",
                         "IP", "TP", "Ar", "Fl", "Cm", "Xr", "Em", "Pa", "Li", "Sy", "Dq", "Sq",
                         "Ql", "Va", "Fn", "Ft", "Fa", "Dv", "Er", "Ev", "It", "Op", "Tn"):
                out[current].append(args.replace('"', " "))
            continue
        out[current].append(raw)
    return {k: unroff(" ".join(v)) for k, v in out.items()}


def man_pages(sections_wanted):
    """(id, query, document) of every installed man page of those sections."""
    for section in sections_wanted:
        for path in sorted(glob.glob(f"/usr/share/man/man{section}/*")):
            try:
                opener = gzip.open if path.endswith(".gz") else open
                with opener(path, "rt", encoding="utf-8", errors="replace") as f:
                    source = f.read()
            except OSError:
                continue
            if source.lstrip().startswith(".so ") or os.path.islink(path):
                continue  # an alias of another page
            s = sections(source)
            name, desc = s.get("NAME", ""), s.get("DESCRIPTION", "")
            m = re.search(r"\s[-\u2013\u2014]+\s+(.*)$", clean(name))
            if not m:
                continue
            page = os.path.basename(path)
            page = page[:-3] if page.endswith(".gz") else page
            yield page, clean(m.group(1)), clean(desc)


# ---- Debian packages ----------------------------------------------------------------------

def debian_packages():
    """(package, synopsis, long description) from apt's Translation-en lists."""
    lists = sorted(glob.glob("/var/lib/apt/lists/*_main_i18n_Translation-en*"))
    if not lists:
        sys.exit("no Translation-en: run apt-get update -o Acquire::Languages=en first")
    for path in lists:
        text = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")
        for stanza in text.split("\n\n"):
            package, synopsis, body = None, None, []
            for line in stanza.splitlines():
                if line.startswith("Package: "):
                    package = line[9:].strip()
                elif line.startswith("Description-en: "):
                    synopsis = line[16:].strip()
                elif line.startswith(" ") and synopsis is not None:
                    body.append("" if line.strip() == "." else line.strip())
            if package and synopsis:
                yield package, synopsis, clean(" ".join(body))


# ---- a task ---------------------------------------------------------------------------------

def stable_order(key):
    return hashlib.sha256(key.encode()).hexdigest()


def write_task(out, name, items, n_docs, n_queries):
    """Documents with enough words, each once; queries whose text names one document alone."""
    seen_ids, seen_docs, seen_queries, kept = set(), set(), {}, []
    for ident, query, doc in items:
        if len(tokens(doc)) < MIN_DOC_TOKENS or len(tokens(query)) < MIN_QUERY_TOKENS:
            continue
        if doc in seen_docs or ident in seen_ids:  # a package in two lists: the first
            continue
        seen_ids.add(ident)
        seen_docs.add(doc)
        seen_queries[query.lower()] = seen_queries.get(query.lower(), 0) + 1
        kept.append((ident, query, doc))
    kept.sort(key=lambda x: stable_order(name + x[0]))
    docs = kept[:n_docs]
    # A synopsis two documents share ("Perl module ...") has no one right answer.
    queries = [d for d in docs if seen_queries[d[1].lower()] == 1][:n_queries]
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "docs.tsv"), "w", encoding="utf-8") as f:
        for ident, _, doc in sorted(docs):
            f.write(f"{ident}\t\t{doc}\n")
    with open(os.path.join(folder, "queries.tsv"), "w", encoding="utf-8") as f:
        for ident, query, _ in sorted(queries):
            f.write(f"{ident}\t\t{query}\n")
    print(f"{name}: {len(docs)} documents, {len(queries)} queries -> {folder}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--docs", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=1000)
    a = ap.parse_args()
    write_task(a.out, "man-commands", man_pages("168"), a.docs, a.queries)
    write_task(a.out, "man-library", man_pages("23457"), a.docs, a.queries)
    write_task(a.out, "debian-packages", debian_packages(), a.docs, a.queries)


if __name__ == "__main__":
    main()
