"""Rewrite a worktree's imports, dotted names and paths from the flat ``analysis/`` to
``analysis/{queue,pipeline,surface}/`` (issue 13's move), for branches begun before it.

    python3 scripts/relayout_imports.py /path/to/worktree

After merging such a branch, run it on the merge result: git carries the branch's edits of
moved files over by rename detection, but imports the branch added (``from analysis.judges
import …``, ``from analysis import lexical``) still name the old places. Idempotent; never
touches schema/ (migrations are not edited) or pyproject.toml. Delete it once no branch
from before the move is left.
"""
import re, subprocess, sys
from pathlib import Path
ROOT = Path(sys.argv[-1]) if len(sys.argv) > 1 and not sys.argv[-1].startswith("--") else Path.cwd()
SUB = {
 "queue": ["userqueue", "jobs", "credits", "sweepers"],
 "pipeline": ["uploads", "parsing", "readers", "pdflayout", "pdftext", "docxreader", "document", "cleantext",
              "citations", "chunking", "retrieval", "sources", "judges", "lexical", "embeddings", "sandbox", "budget"],
 "surface": ["views", "report", "metrics", "ratelimits", "accounts"],
}
NEW = {"pipeline": "pipeline.analyze"}  # old module name -> new dotted under analysis
for sub, mods in SUB.items():
    for m in mods:
        NEW[m] = f"{sub}.{m}"
SQL = {"queries.sql": "queue/queries.sql", "pipeline.sql": "pipeline/queries.sql", "surface.sql": "surface/queries.sql"}
TOP = ["db", "errors", "inputs", "messages", "settings"]

names = "|".join(sorted(NEW, key=len, reverse=True))
NEWSUBS = "|".join(sorted({v.split(".")[1] for v in NEW.values()}))
dotted = re.compile(rf"\banalysis\.({names})\b(?![/\w])(?!\.(?:{NEWSUBS})\b)")
slashed = re.compile(rf"\banalysis/({names})\.py\b")
def rewrite_from_analysis(line):
    # from analysis import a, b as c  -> grouped per subpackage
    m = re.match(r"^(\s*)from analysis import ([\w, ]+?)(\s*#.*)?$", line)
    if not m: return None
    indent, items, comment = m.group(1), m.group(2), m.group(3) or ""
    groups = {}
    for item in [i.strip() for i in items.split(",") if i.strip()]:
        name, _, alias = item.partition(" as ")
        name = name.strip(); alias = alias.strip()
        if name in NEW:
            pkg, _, mod = ("analysis." + NEW[name]).rpartition(".")
            if mod != name and not alias:
                alias = name
        else:
            pkg, mod = "analysis", name
        groups.setdefault(pkg, []).append(mod + (f" as {alias}" if alias else ""))
    out = [f"{indent}from {pkg} import {', '.join(v)}" for pkg, v in sorted(groups.items())]
    out[-1] += comment
    return "\n".join(out)

def rewrite_relative(line, pkg_of_file):
    # inside analysis/: make relative imports absolute
    m = re.match(r"^(\s*)from \.([\w]*) import (.*)$", line)
    if not m: return None
    indent, mod, rest = m.groups()
    if mod:
        full = "analysis." + NEW.get(mod, mod)
        return f"{indent}from {full} import {rest}"
    return rewrite_from_analysis(f"{indent}from analysis import {rest}")

SKIP_PREFIX = ('schema/', 'pyproject.toml', 'scripts/relayout_imports.py')
files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
for f in files:
    p = ROOT / f
    if f.startswith(SKIP_PREFIX):
        continue
    if p.suffix not in {".py", ".md", ".toml", ".sql", ".txt", ".cfg", ".ini", ""} and p.name not in {"Procfile", "Makefile", "run"}:
        continue
    if not p.is_file(): continue
    try: text = p.read_text()
    except UnicodeDecodeError: continue
    orig = text
    def _dotted(m):
        if m.group(1) == "pipeline":  # the old module or the new package?
            after = re.match(r" import (?:\(([\w, \n]+)\)|([\w, ]+))", text[m.end():])
            names = [n.split(" as ")[0].strip() for n in (after.group(1) or after.group(2)).split(",")] if after else []
            if names and all(n in SUB["pipeline"] + ["analyze"] for n in names if n):
                return m.group(0)
        return "analysis." + NEW[m.group(1)]
    text = dotted.sub(_dotted, text)
    text = slashed.sub(lambda m: "analysis/" + NEW[m.group(1)].replace(".", "/") + ".py", text)
    for o, n in SQL.items():
        text = text.replace("analysis/" + o, "analysis/" + n)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if p.suffix == ".py":
            r = None
            if f.startswith("analysis/"):
                r = rewrite_relative(line, None)
            if r is None:
                r = rewrite_from_analysis(line)
            if r is not None:
                lines[i] = r
    text = "\n".join(lines)
    if text != orig:
        p.write_text(text)
        print("edited", f)
