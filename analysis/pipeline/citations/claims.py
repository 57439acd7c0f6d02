"""The claim a citation supports: the clause it belongs to, with every marker removed.
"""

from __future__ import annotations


import re
from analysis.pipeline.documents.document import FOOTNOTE_MARK

from analysis.pipeline.citations.markers import Marker
from analysis.pipeline.citations.names import squash
from analysis.pipeline.citations.patterns import (BOUNDARY_BEFORE, BOUNDARY_INSIDE, FRAME_AFTER,
    FRAME_BEFORE, FRAME_ZUFOLGE, LEADING_CONNECTOR, SPLIT_AFTER)

def clauses(sentence: str, origin: int, markers: list[Marker]) -> dict[tuple[int, int], str]:
    """The claim of each marker group of one sentence (which starts at `origin` of its
    paragraph), keyed by the group's span in the paragraph.

    A sentence is cut between groups only at a clause boundary: after a parenthetical (or
    numeric, or footnote) group that a comma, a semicolon or "whereas"/"während" follows,
    and before a narrative group that such a boundary precedes. A group owns the clause
    it falls in; without boundaries every group shares the whole sentence.
    """
    local: dict[tuple[int, int], Marker] = {}
    for marker in markers:
        span = (max(0, marker.group[0] - origin), min(len(sentence), marker.group[1] - origin))
        local.setdefault(span, marker)
    cuts = {0, len(sentence)}
    ordered = sorted(local)
    for (start, end), (next_start, _) in zip(ordered, ordered[1:]):
        between = sentence[end:next_start]
        if local[(start, end)].kind != "narrative" and SPLIT_AFTER.match(between):
            cuts.add(end)  # "X rose (A, 2020), whereas Y fell (B, 2019)"
        elif local[(next_start, _)].kind == "narrative" and BOUNDARY_BEFORE.search(between):
            cuts.add(end + BOUNDARY_BEFORE.search(between).start())  # "…, whereas Nakamura (2020) found …"
        else:
            inner = BOUNDARY_INSIDE.search(between)
            if inner:  # "Nakamura (2020) found X, whereas Y fell (Lee, 2019)"
                cuts.add(end + inner.start())
    bounds = sorted(cuts)
    segments = list(zip(bounds, bounds[1:]))
    claims: dict[tuple[int, int], str] = {}
    for span, marker in local.items():
        seg = next((s for s in segments if s[0] <= span[0] < s[1]), (0, len(sentence)))
        inside = {(a - seg[0], b - seg[0]): m for (a, b), m in local.items() if seg[0] <= a < seg[1]}
        claims[marker.group] = _claim(sentence[seg[0]:seg[1]], inside)
    for marker in markers:
        claims.setdefault(marker.group, claims[next(iter(claims))] if claims else _claim(sentence, {}))
    return claims


def _claim(segment: str, groups: dict[tuple[int, int], Marker]) -> str:
    """A clause with its markers removed and a narrative frame dropped or reduced to the name."""
    out = segment
    for (start, end), marker in sorted(groups.items(), reverse=True):
        if marker.kind == "narrative":
            before, after = out[:start], out[end:]
            frame = FRAME_BEFORE.search(before)
            zufolge = FRAME_ZUFOLGE.match(after)
            reporting = FRAME_AFTER.match(after)
            if frame:
                out = before[: frame.start()] + re.sub(r"^\s*,", "", after)
            elif zufolge:
                out = before + after[zufolge.end():]
            elif reporting:
                out = before + after[reporting.end():]
            else:
                names = squash(re.sub(r"\s*\(.*$", "", out[start:end]))  # "Castillo's (2018)" -> "Castillo's"
                out = before + names + after
        else:
            out = out[:start] + out[end:]
    out = FOOTNOTE_MARK.sub("", out)
    out = squash(out)
    out = re.sub(r"\s+([,.;:!?])", r"\1", out).replace("()", "").replace("[]", "")
    out = LEADING_CONNECTOR.sub("", out).strip()
    out = re.sub(r"[,;:\s]+$", "", out)
    if out and not re.search(r"[.!?]$", out):
        out += "."
    return out
