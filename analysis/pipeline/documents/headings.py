"""What a reference list's heading looks like, in English and German and in any heading
syntax (``## References``, ``7 Literatur``, ``REFERENCES:``): read by the readers, which make
such a line a heading, and by citation extraction, which splits the list off at it.
"""

from __future__ import annotations

import re

_ONE_HEADING = (r"(?:references(?:\s+cited)?|reference\s+list|list\s+of\s+references|bibliography|bibliographie"
                r"|works\s+(?:cited|consulted)|literature(?:\s+cited)?|sources|literaturverzeichnis|literaturliste"
                r"|literaturangaben|literatur|quellenverzeichnis|quellen|quellenangaben|sources\s+consulted"
                r"|(?:verzeichnis\s+der\s+)?(?:zitierten|verwendeten|benutzten|herangezogenen)\s+literatur"
                r"|(?:zitierte|verwendete|benutzte)\s+literatur)")
#: One heading word, or two joined ("Literatur- und Quellenverzeichnis", "Quellen und Literatur",
#: "References and Notes", "Sources and Bibliography").
_HEADING_WORDS = (rf"(?:{_ONE_HEADING}|(?:literatur|quellen)-?\s+und\s+(?:{_ONE_HEADING}|quellen-?\s*verzeichnis)"
                  rf"|{_ONE_HEADING}\s+(?:und|and|&)\s+(?:{_ONE_HEADING}|notes|further\s+reading|anmerkungen))")
_HEADING_TEXT = re.compile(
    rf"(?i)^[ \t]*(?:#{{1,6}}[ \t]*)?(?:(?:\d+|[IVX]+|[A-Z])(?:\.\d+)*\.?[ \t]+)?{_HEADING_WORDS}[ \t]*:?[ \t#]*$")
#: A line of a whole text that is such a heading (searched line by line).
REFERENCE_HEADING_LINE = re.compile(
    rf"(?im)^[ \t]*(?:#{{1,6}}[ \t]*)?(?:(?:\d+|[IVX]+)(?:\.\d+)*\.?[ \t]+)?{_HEADING_WORDS}[ \t]*:?[ \t#]*$")


def is_reference_heading(text: str) -> bool:
    """True if `text` (a heading or a line on its own) names a reference list."""
    return bool(_HEADING_TEXT.match(" ".join(text.split()))) if len(text) < 60 else False
