"""What Index.explain returns: the flows that carry a distance, and a drawing of them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Flow:
    """`mass` of the query's word moved to the document's word at `cost` (their Euclidean
    distance) per unit: it adds mass * cost to the distance. Masses are fractions of each
    document's total weight 1."""
    query_word: str
    doc_word: str
    mass: float
    cost: float

    @property
    def contribution(self) -> float:
        return self.mass * self.cost


@dataclass(frozen=True)
class Explanation:
    """Why a document is at its distance from a query (Index.explain). `flows`, largest
    contribution first: for "wmd" the EMD solver's optimal flow; for "rwmd"/"lc-rwmd" the
    direction that set the distance, both directions being in `doc_to_query` (each document
    word to its nearest query word) and `query_to_doc` (each query word to its nearest document
    word)."""
    doc: str
    method: str
    symmetric: bool
    distance: float
    flows: list[Flow]
    doc_to_query: list[Flow] = field(default_factory=list)
    query_to_doc: list[Flow] = field(default_factory=list)
    doc_to_query_distance: Optional[float] = None
    query_to_doc_distance: Optional[float] = None
    doc_to_query_set_distance: Optional[bool] = None
    direction: str = "symmetric"

    def __repr__(self) -> str:
        # A summary: an explanation holds a flow per pair of words, hundreds for long texts.
        shown = ", ".join(f"{f.query_word}->{f.doc_word} {f.contribution:.4g}"
                          for f in self.flows[:3])
        more = f", ... {len(self.flows) - 3} more" if len(self.flows) > 3 else ""
        return (f"Explanation(doc={self.doc!r}, method={self.method!r}, "
                f"direction={self.direction!r}, distance={self.distance:.6g}, "
                f"{len(self.flows)} flows: {shown}{more})")


def _flows(d) -> list[Flow]:
    return [Flow(*f) for f in zip(d["query_word"], d["doc_word"], d["mass"], d["cost"])]


def _explanation(d: dict) -> Explanation:
    return Explanation(
        doc=d["doc"], method=d["method"], symmetric=d["symmetric"], distance=d["distance"],
        flows=_flows(d["flows"]),
        doc_to_query=_flows(d["doc_to_query"]) if "doc_to_query" in d else [],
        query_to_doc=_flows(d["query_to_doc"]) if "query_to_doc" in d else [],
        doc_to_query_distance=d.get("doc_to_query_distance"),
        query_to_doc_distance=d.get("query_to_doc_distance"),
        doc_to_query_set_distance=d.get("doc_to_query_set_distance"),
        direction=d["direction"])


def plot_alignment(explanation: Explanation, path=None, top: int = 30, ax=None):
    """Draws the query's words (left) and the document's (right) with the flow between them
    as lines as wide as the mass moved (colour: cost), the `top` largest contributions; saves
    a PNG to `path` where given. Needs matplotlib. Returns the matplotlib Axes."""
    from .plot import plot_alignment as _plot
    return _plot(explanation, path=path, top=top, ax=ax)
