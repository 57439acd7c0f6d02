"""Author-name keys: particles, case and accents folded.
"""

from __future__ import annotations


import re
import unicodedata

from analysis.pipeline.citations.patterns import PARTICLE, STOP

def name_key(name: str) -> str:
    """Compare names across spellings: "Müller", "Mueller" and "MULLER" agree."""
    folded = name.casefold().replace("ß", "ss")
    for umlaut, plain in (("ä", "a"), ("ö", "o"), ("ü", "u"), ("ae", "a"), ("oe", "o"), ("ue", "u")):
        folded = folded.replace(umlaut, plain)
    decomposed = unicodedata.normalize("NFKD", folded)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def strip_particles(name: str) -> str:
    return re.sub(rf"^{PARTICLE}+", "", name).strip()


def content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w{3,}", name_key(text)) if w not in STOP]


def squash(text: str) -> str:
    return " ".join(text.split())
