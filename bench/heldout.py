"""Held-out documentation sets: the wiki measured against a truth written by reading the documents first.

    python bench/heldout.py fetch [SET ...]              # lay out DEST/SET/raw from the pinned sdist (needs PyPI)
    python bench/heldout.py compile [SET ...]            # wikimem init + compile each set, offline
    python bench/heldout.py score [SET ...] [--notes] [--json] [-v]
    python bench/heldout.py all [SET ...]                # fetch, compile and score

Every set is a package's sdist, pinned by version and SHA-256 (bench/heldout/SET/manifest.json
lists each file taken from it and where it goes under raw/). The truth beside it was written by
reading the documents before anyone looked at the wiki compiled from them:

- titles.tsv: `path<TAB>title`, the title Sphinx or the site generator shows (`-` when the
  document has none; ` | ` then gives a fitting title, which is not scored);
- facts.jsonl: facts that change across releases, their current value with its evidence, the
  kind of evidence ("current", "latest_statement_only"), and "not_a_product_fact" rows: lines
  that look like a product's minimum but are a plugin's, one feature's or another library's;
- questions.jsonl: questions in the probe format of bench/navigation.py, with verbatim evidence;
- concepts.txt: what a reader expects a concept page for (bench/concepts.py's format);
- notes/: a team's notes to drop beside the docs, and notes/expected.jsonl: which of their
  statements are stale against the docs' current values.

Figures per set (`score`): source titles right / titled documents; pages that show a role or
a reST label raw; shortened lines (catalogs, leads) with an identifier mangled (`tmp_path`
shown as "tmppath"); concept pages defined by a table row; source pages sharing one title;
timelines: how many, how many judged against the truth, their current value right (precision)
and the truth's current facts found right (recall), current values taken from a line that is
not the product's fact; navigation (bench/navigation.py's figures for the questions); concept
coverage; index.md and the largest catalog in KB. With --notes, a copy of the workspace gets
the notes in raw/notes/, is compiled again and linted: stale statements found, missed, and
findings on statements that are not stale.

DEST is --dest, else $WIKIMEM_HELDOUT, else ~/.cache/wikimem-heldout. Nothing is written in this
repository. Exit 0, or 1 when a set could not be fetched, compiled or scored.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "heldout"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "daemon"))

import concepts  # noqa: E402 - bench/concepts.py, next to this file
import contract  # noqa: E402
import navigation  # noqa: E402

VERSION = re.compile(r"(?<![\w.])\d+(?:\.\d+)*")  # not the digit of a name ("psycopg2 2.8.4" is 2.8.4)
ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`")
CODE_SPAN = re.compile(r"``.+?``|(?<![:`])`[^`\n]+`")
SCOPE_PREFIX = re.compile(r"(?<![\w/.-])_[a-z][a-z0-9]*\.[A-Za-z_]")
DOTTED = re.compile(r"[\w.]*\w")
LABEL_DEF = re.compile(r"^\.\. _([^:`\n]+):\s*$", re.M)
CODE_SPAN = re.compile(r"``([^`\n]+)``|(?<!`)`([^`\n]+)`(?!`)")
LINK_TARGET = re.compile(r"\]\([^)]*\)")


def sets() -> list[str]:
    return sorted(p.name for p in TRUTH.iterdir() if (p / "manifest.json").is_file())


def dest_root(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    env = os.environ.get("WIKIMEM_HELDOUT")
    return Path(env) if env else Path.home() / ".cache" / "wikimem-heldout"


# ---------------------------------------------------------------- fetch and compile


def fetch(name: str, dest: Path) -> Path:
    manifest = json.loads((TRUTH / name / "manifest.json").read_text())
    cache = dest / "sdists"
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / manifest["sdist"]
    if not archive.is_file() or hashlib.sha256(archive.read_bytes()).hexdigest() != manifest["sdist_sha256"]:
        print(f"downloading {manifest['package']}=={manifest['version']} ...", file=sys.stderr)
        # only the package itself as an sdist: its build requirements may come as wheels (one built
        # from source may need a compiler toolchain and its own registry, none of which the docs need)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", manifest["package"],
                        f"{manifest['package']}=={manifest['version']}", "-d", str(cache)], check=True)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != manifest["sdist_sha256"]:
        raise RuntimeError(f"{archive.name}: sha256 {digest} is not the pinned {manifest['sdist_sha256']}")
    raw = dest / name / "raw"
    shutil.rmtree(dest / name, ignore_errors=True)
    with tarfile.open(archive) as tar:
        for entry in manifest["files"]:
            data = tar.extractfile(entry["member"])
            if data is None:
                raise RuntimeError(f"{archive.name}: no file {entry['member']}")
            target = raw / entry["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.read())
    return raw


def compile_set(name: str, dest: Path) -> Path:
    root = dest / name / "ws"
    shutil.rmtree(root, ignore_errors=True)
    navigation.build(root, dest / name / "raw")
    return root


# ---------------------------------------------------------------- reading the wiki


def _page(path: Path) -> tuple[dict[str, Any], str]:
    from wikimem.pages import FrontMatterError, loads_page

    try:
        page = loads_page(path.name, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return {}, ""
    return dict(page.meta), page.body


def _norm_title(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = re.sub(r"[`*\\]", "", text)
    return " ".join(text.split()).strip()


def _lead(body: str) -> str:
    """The first paragraph after the page's H1."""
    parts = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    for i, part in enumerate(parts):
        if part.startswith("# "):
            return parts[i + 1] if i + 1 < len(parts) else ""
    return parts[0] if parts else ""


def titles(ws: Path, truth: Path) -> dict[str, Any]:
    wanted: dict[str, str] = {}
    for line in truth.read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            path, title = line.split("\t", 1)
            wanted[path] = title
    got: dict[str, str] = {}
    for file in (ws / "wiki" / "sources").rglob("*.md"):
        meta, _ = _page(file)
        sources = meta.get("sources") or []
        if meta.get("kind") == "source" and sources and not meta.get("part"):
            got.setdefault(str(sources[0]).removeprefix("raw/"), str(meta.get("title", "")))
    titled = {p: t for p, t in wanted.items() if not t.startswith("- ") and t != "-"}
    right = [p for p, t in titled.items() if p in got and _norm_title(got[p]) == _norm_title(t)]
    wrong = [(p, titled[p], got[p]) for p in sorted(titled) if p in got and p not in right]
    missing = sorted(p for p in titled if p not in got)
    counts = Counter(got.values())
    shared = sorted(t for t, n in counts.items() if n > 1)
    return {"titled": len(titled), "paged": len(titled) - len(missing), "right": len(right), "wrong": wrong,
            "no_page": missing, "untitled": len(wanted) - len(titled), "titles_shared": shared}


def markup(ws: Path) -> dict[str, Any]:
    """Pages that show a role, a scope prefix (`_orm.Session`) or a reST label raw."""
    labels: set[str] = set()
    prose: list[str] = []  # raw/ without its label definitions and the references that name them
    stems: set[str] = set()
    for file in (ws / "raw").rglob("*"):
        if not file.is_file():
            continue
        stems.add(file.stem)
        if file.suffix in (".rst", ".txt", ".md"):
            text = file.read_text(encoding="utf-8", errors="replace")
            if file.suffix != ".md":
                labels |= {m.group(1).strip() for m in LABEL_DEF.finditer(text)}
            prose.append(re.sub(r"<[^<>`\n]+>`|:`[^`\n]+`", " ", LABEL_DEF.sub(" ", text)))
    # a label that is also an ordinary word, a file's name (cited on every page that quotes it) or
    # an identifier the text writes itself (an option named like its section's label) proves nothing
    written = "\n".join(prose)
    labels = {lab for lab in labels if len(lab) > 6 and re.search(r"[_-]", lab) and " " not in lab
              and lab not in stems and not re.search(rf"(?<![\w-]){re.escape(lab)}(?![\w-])", written)}
    label_re = re.compile(r"(?<![\w./#-])(" + "|".join(map(re.escape, sorted(labels, key=len, reverse=True))) + r")(?![\w-])") \
        if labels else None
    role_pages, scope_pages, label_pages = [], [], []
    examples: list[str] = []
    for file in sorted((ws / "wiki").rglob("*.md")):
        rel = file.relative_to(ws / "wiki").as_posix()
        if rel in ("log.md", "AGENTS.md"):
            continue
        text = LINK_TARGET.sub("]", file.read_text(encoding="utf-8", errors="replace"))
        # a role written as code is shown on purpose (a page about reST: "the `:collapsible:`
        # option", "`` :func:`spam` ``"); a role's own backquote follows its colon
        if ROLE.search(CODE_SPAN.sub(" ", text)):
            role_pages.append(rel)
        # a name the documents write with its underscore themselves (a module file `_run.py`, a
        # private path a changelog names) is their text, not a scope prefix the wiki left on
        if m := next((m for m in SCOPE_PREFIX.finditer(text)
                      if not re.search(rf"(?<![\w.]){re.escape(DOTTED.match(text, m.start()).group(0))}(?![\w])", written)),
                     None):
            scope_pages.append(rel)
            examples.append(f"{rel}: {text[max(0, m.start() - 30): m.end() + 20]!r}")
        # a page's note on a label it could not resolve names the label on purpose
        if label_re is not None and (m := label_re.search(re.sub(r"(?m)^> Note:.*$", "", text))):
            label_pages.append(rel)
            examples.append(f"{rel}: label {m.group(1)!r}")
    return {"role_pages": len(role_pages), "scope_prefix_pages": len(scope_pages), "label_pages": len(label_pages),
            "labels_defined": len(labels), "examples": examples[:20]}


def mangled(ws: Path) -> dict[str, Any]:
    """Identifiers with `_` or `*` written in code in raw/, shown without them in catalog lines and leads."""
    raw_words: set[str] = set()
    idents: set[str] = set()
    for file in (ws / "raw").rglob("*"):
        if not file.is_file() or file.suffix not in (".rst", ".txt", ".md"):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        raw_words |= set(re.findall(r"[\w.]+", text))
        for m in CODE_SPAN.finditer(text):
            for token in re.findall(r"[\w.*]+", m.group(1) or m.group(2) or ""):
                if ("_" in token.strip("_.") or token.startswith("__")) and len(token.replace("_", "")) > 3:
                    idents.add(token)
    forms: dict[str, str] = {}
    for ident in idents:
        for bad in {ident.replace("_", ""), ident.strip("_").replace("__", "")}:
            if bad and bad != ident and bad not in raw_words and re.fullmatch(r"[\w.]+", bad):
                forms.setdefault(bad, ident)
    lines: list[str] = []
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(forms, key=len, reverse=True))) + r")(?![\w])") \
        if forms else None
    for file in sorted((ws / "wiki").rglob("*.md")):
        rel = file.relative_to(ws / "wiki").as_posix()
        if rel in ("log.md", "AGENTS.md") or pattern is None:
            continue
        if navigation.is_catalog(file.name):
            shortened = [ln for ln in file.read_text(encoding="utf-8", errors="replace").splitlines() if ln.startswith("- ")]
        else:
            shortened = [_lead(_page(file)[1])]
        for line in shortened:
            text = LINK_TARGET.sub("]", line)
            if m := pattern.search(text):
                lines.append(f"{rel}: {m.group(1)!r} for {forms[m.group(1)]!r}")
    return {"identifiers": len(idents), "mangled_lines": len(lines), "examples": lines[:20]}


def _tables(text: str) -> list[tuple[int, int]]:
    """The 1-based line spans of tables: grid and simple reST tables, list/csv tables, Markdown pipe tables."""
    lines = text.splitlines()
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        start = i
        if re.match(r"\.\.\s+(list-table|csv-table|table)::", stripped):
            indent = len(line) - len(line.lstrip())
            i += 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                i += 1
        elif re.fullmatch(r"\s*=+(?:\s+=+)+\s*", line):
            borders = 1
            i += 1
            while i < len(lines) and borders < 3:
                if re.fullmatch(r"\s*=+(?:\s+=+)+\s*", lines[i]):
                    borders += 1
                    if borders == 2 and (i + 1 >= len(lines) or not lines[i + 1].strip()):
                        i += 1
                        break  # a table without a header row: its second border ends it
                elif not lines[i].strip() and borders == 1:
                    break
                i += 1
        elif re.match(r"^\s*[+|]", line) and stripped.count("|") + stripped.count("+") >= 2:
            while i < len(lines) and re.match(r"^\s*[+|]", lines[i]):
                i += 1
        else:
            i += 1
            continue
        spans.append((start + 1, i))
    return spans


LONG_TABLE = 50  # rows: a table this long is data (a plugin list, an index), not prose


def table_concepts(ws: Path) -> dict[str, Any]:
    """Concept pages defined by a table row, and citations anywhere into a long table."""
    cache: dict[str, list[tuple[int, int]]] = {}

    def spans(path: str) -> list[tuple[int, int]]:
        if path not in cache:
            raw = ws / path
            cache[path] = _tables(raw.read_text(encoding="utf-8", errors="replace")) if raw.is_file() else []
        return cache[path]

    hits: list[str] = []
    into_long: list[str] = []
    cite = re.compile(r"\]\((?:\.\./)+(raw/[^)#]+)#L(\d+)")
    for file in sorted((ws / "wiki").rglob("*.md")):
        rel = file.relative_to(ws / "wiki").as_posix()
        if navigation.is_catalog(file.name) or rel in ("log.md", "AGENTS.md"):
            continue
        meta, body = _page(file)
        if rel.startswith("concepts/"):
            m = cite.search(_lead(body))
            if m and any(a <= int(m.group(2)) <= b for a, b in spans(m.group(1))):
                hits.append(f"{meta.get('title')}: {_lead(body)[:120]!r}")
        for m in cite.finditer(body):
            if any(a <= int(m.group(2)) <= b and b - a > LONG_TABLE for a, b in spans(m.group(1))):
                into_long.append(f"{rel} cites {m.group(1)}#L{m.group(2)}")
                break
    return {"concept_pages": sum(1 for f in (ws / "wiki" / "concepts").rglob("*.md") if not f.name.startswith("index")),
            "defined_by_table_row": len(hits), "pages_citing_long_tables": len(into_long),
            "examples": (hits + into_long)[:20]}


# ---------------------------------------------------------------- facts


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9][\w.+-]*", text.lower()) if w not in ("version", "versions", "the", "of", "supported")]


def _relation(words: list[str]) -> str:
    for w in words:
        if w in ("minimum", "oldest", "min"):
            return "minimum"
        if w in ("default", "defaults"):
            return "default"
        if w in ("newest", "maximum", "latest"):
            return "newest"
    return "value"


def _version_of(text: str) -> tuple[int, ...] | None:
    m = VERSION.search(text)
    if not m:
        return None
    parts = [int(x) for x in m.group(0).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def timelines(ws: Path) -> list[dict[str, Any]]:
    out = []
    for file in sorted((ws / "wiki" / "facts").glob("*.md")) if (ws / "wiki" / "facts").is_dir() else []:
        if file.name.startswith("index"):
            continue
        meta, body = _page(file)
        strong = re.search(r"^Current:\s*\*\*(.+?)\*\*", body, re.M)
        weak = re.search(r"^Latest statement[^:\n]*:\s*\*\*(.+?)\*\*", body, re.M | re.I)
        claim = strong or weak
        cite = re.search(r"\]\((?:\.\./)+raw/([^)#]+)#L(\d+)\)", body[claim.end():] if claim else body)
        title = str(meta.get("title", file.stem))
        out.append({"page": file.name, "title": title, "label": re.sub(r"\s*\([^()]*\)\s*$", "", title),
                    "value": claim.group(1) if claim else "", "strength": "current" if strong else "latest" if weak else "none",
                    "cited": (cite.group(1), int(cite.group(2))) if cite else None})
    return out


def facts(ws: Path, truth: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in truth.read_text(encoding="utf-8").splitlines() if line.strip()]
    product = [r for r in rows if r.get("kind") != "not_a_product_fact"]
    negative = {(e["path"], e["line"]) for r in rows if r.get("kind") == "not_a_product_fact"
                for e in (r.get("evidence") or r.get("current_evidence") or [r])
                if isinstance(e, dict) and "path" in e and "line" in e}
    lines = timelines(ws)
    judged, right, wrong, unmatched, from_negative = [], [], [], [], []
    found: set[int] = set()
    for t in lines:
        tw = _words(t["label"])
        best = None
        entity = set(tw) - {"minimum", "default", "newest", "oldest", "maximum", "latest"}
        overlap = 0
        for i, r in enumerate(product):
            rw = _words(r["fact"])
            if _relation(tw) != _relation(rw) or not entity:
                continue
            said = set(rw) | set(_words(r.get("subject", "")))
            if entity <= said:
                best = i
                break
            # a subject the truth words another way ("DBAPI driver for the PostgreSQL dialect" and
            # "DBAPI driver for postgresql:// URLs"): most of its words, three at least
            shared = len(entity & said)
            if shared >= 3 and shared >= 0.75 * len(entity) and shared > overlap:
                best, overlap = i, shared
        if t["cited"] in negative:
            from_negative.append(f"{t['title']}: {t['value']!r} from {t['cited'][0]}:{t['cited'][1]}")
        if best is None:
            unmatched.append(f"{t['title']}: {t['strength']} {t['value']!r}")
            continue
        r = product[best]
        judged.append(t)
        value = t["value"]
        truth_value = str(r["current"])
        # a word value: the truth's, or the word it leads with ("True (enabled)", "None (full width)")
        lead = re.split(r"\s*[(,;]", truth_value)[0].strip().lower()
        ok = not re.match(r"\s*(drops|last release)", value) and (
            _version_of(value) == _version_of(truth_value) if _version_of(truth_value) and _version_of(value) else
            truth_value.lower() in value.lower() or bool(lead) and lead == re.split(r"\s*\(", value)[0].strip().lower())
        if ok and (t["cited"] not in negative):
            right.append(t["title"])
            found.add(best)
        else:
            wrong.append(f"{t['title']}: says {t['strength']} {value!r}, truth {r['current']!r} ({r.get('kind')})")
    current_truth = [i for i, r in enumerate(product) if r.get("kind") == "current"]
    return {"timelines": len(lines), "judged": len(judged), "right": len(right),
            "precision": round(len(right) / len(judged), 3) if judged else None,
            "truth_current": len(current_truth), "found_right": len([i for i in current_truth if i in found]),
            "recall": round(len([i for i in current_truth if i in found]) / len(current_truth), 3) if current_truth else None,
            "from_non_product_lines": from_negative, "wrong": wrong, "unmatched": unmatched,
            "missed": [product[i]["fact"] for i in current_truth if i not in found]}


def stale_notes(ws: Path, notes: Path) -> dict[str, Any]:
    """A copy of the workspace with the team's notes in raw/notes/, compiled and linted."""
    expected = [json.loads(line) for line in (notes / "expected.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="wikimem-notes-") as tmp:
        copy = Path(tmp) / "ws"
        shutil.copytree(ws, copy, symlinks=True)
        (copy / "raw" / "notes").mkdir(exist_ok=True)
        for file in notes.iterdir():
            if file.name != "expected.jsonl":
                shutil.copy2(file, copy / "raw" / "notes" / file.name)
        env = navigation._environment()
        subprocess.run([*navigation._wikimem(), "compile", "--root", str(copy), "--quiet"], env=env,
                       capture_output=True, check=False)
        done = subprocess.run([*navigation._wikimem(), "lint", "--root", str(copy), "--json"], env=env,
                              capture_output=True, text=True, check=False)
    report = json.loads(done.stdout or "{}")
    flagged: dict[int, list[str]] = {}
    for f in report.get("findings", []):
        for path, line in zip(f.get("paths", []), f.get("lines", []), strict=False):
            if path.startswith("raw/notes/") and line:
                flagged.setdefault(int(line), []).append(f"{f.get('rule')}: {f.get('message', '')[:160]}")
    true_pos = [e for e in expected if e.get("stale") is True and e["line"] in flagged]
    missed = [e for e in expected if e.get("stale") is True and e["line"] not in flagged]
    false_pos = [(ln, msgs) for ln, msgs in flagged.items()
                 if not any(e["line"] == ln and e.get("stale") is True for e in expected)]
    return {"stale": sum(e.get("stale") is True for e in expected), "found": len(true_pos),
            "missed": [f"line {e['line']}: {e['text'][:100]}" for e in missed],
            "false": [f"line {ln}: {msgs[0]}" for ln, msgs in sorted(false_pos)]}


# ---------------------------------------------------------------- the figures of one set


def score(name: str, dest: Path, with_notes: bool) -> dict[str, Any]:
    ws = dest / name / "ws"
    truth = TRUTH / name
    if not (ws / "wiki" / "index.md").is_file():
        raise RuntimeError(f"{ws} is not compiled: run `python bench/heldout.py compile {name}`")
    out: dict[str, Any] = {"set": name, "titles": titles(ws, truth / "titles.tsv"), "markup": markup(ws),
                           "mangled": mangled(ws), "tables": table_concepts(ws), "facts": facts(ws, truth / "facts.jsonl")}
    probes = [navigation.Probe(id=p["id"], corpus=name, kind=p.get("kind", ""), question=p["question"],
                               answer=str(p.get("answer", "")), source=p["source"], evidence=p["evidence"])
              for p in map(json.loads, (truth / "questions.jsonl").read_text().splitlines()) if p]
    samples = navigation.measure(ws, name, probes, combined=False)
    out["navigation"] = navigation.figures(samples)
    out["navigation"]["off_wiki"] = [s.id for s in samples if not s.on_wiki]
    out["concepts"] = concepts.coverage(ws / "wiki", truth / "concepts.txt")
    wiki = ws / "wiki"
    catalogs = [f for f in wiki.rglob("*.md") if navigation.is_catalog(f.name) and f != wiki / "index.md"]
    out["catalogs"] = {"index_kb": round((wiki / "index.md").stat().st_size / 1000, 1),
                       "largest_kb": round(max((f.stat().st_size for f in catalogs), default=0) / 1000, 1),
                       "over_6kb": sum(f.stat().st_size > 6000 for f in catalogs), "count": len(catalogs)}
    if with_notes and (truth / "notes" / "expected.jsonl").is_file():
        out["stale_notes"] = stale_notes(ws, truth / "notes")
    return out


def figure_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        if "error" in r:
            rows.append(contract.row(f"heldout, {r['set']}", status="error", note=r["error"][:300]))
            continue
        n, t, f, nav = r["set"], r["titles"], r["facts"], r["navigation"]
        rows.append(contract.row(f"titles right, {n}", round(t["right"] / max(1, t["paged"]), 3), "", goal="≥ 0.95",
                                 status="ok" if t["right"] >= 0.95 * t["paged"] else "over",
                                 note=f"{t['right']}/{t['paged']} titled documents with a page"))
        rows.append(contract.row(f"pages with raw roles, scope prefixes or labels, {n}",
                                 r["markup"]["role_pages"] + r["markup"]["scope_prefix_pages"] + r["markup"]["label_pages"],
                                 "pages", goal="0", status="info"))
        rows.append(contract.row(f"lines with a mangled identifier, {n}", r["mangled"]["mangled_lines"], "lines",
                                 goal="0", status="info"))
        rows.append(contract.row(f"concepts defined by a table row, {n}", r["tables"]["defined_by_table_row"], "pages",
                                 goal="0", status="info"))
        rows.append(contract.row(f"timeline precision, {n}", f["precision"], "", goal="≥ 0.9", status="info",
                                 note=f"{f['right']}/{f['judged']} judged of {f['timelines']} timelines"))
        rows.append(contract.row(f"timeline recall, {n}", f["recall"], "", status="info",
                                 note=f"{f['found_right']}/{f['truth_current']} current facts"))
        rows.append(contract.row(f"navigation median bytes, {n}", nav["median_bytes"], "B", goal="≤ 8 KB", status="info",
                                 note=f"on wiki {nav['on_wiki']}/{nav['probes']}, within 20 KB {nav['within_20kb_share']}"))
        rows.append(contract.row(f"largest catalog, {n}", r["catalogs"]["largest_kb"], "KB", goal="≤ 6 KB", status="info"))
        rows.append(contract.row(f"concept coverage, {n}", r["concepts"]["coverage"], "", status="info"))
        if "stale_notes" in r:
            s = r["stale_notes"]
            rows.append(contract.row(f"stale notes found, {n}", s["found"], "", status="info",
                                     note=f"of {s['stale']}; false findings {len(s['false'])}"))
    return rows


def markdown(results: list[dict[str, Any]], verbose: bool) -> str:
    head = ("| set | titles | raw markup pages | mangled lines | table concepts+pages citing long tables | timelines | precision | recall "
            "| on wiki | median nav | within 20 KB | largest catalog | concepts | stale notes |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        if "error" in r:
            out.append(f"| {r['set']} | error: {r['error']} |")
            continue
        t, m, f, nav = r["titles"], r["markup"], r["facts"], r["navigation"]
        s = r.get("stale_notes")
        out.append(" | ".join([
            f"| {r['set']}", f"{t['right']}/{t['paged']}", f"{m['role_pages']}+{m['scope_prefix_pages']}+{m['label_pages']}",
            str(r["mangled"]["mangled_lines"]),
            f"{r['tables']['defined_by_table_row']}+{r['tables']['pages_citing_long_tables']}",
            str(f["timelines"]), f"{f['right']}/{f['judged']}", f"{f['found_right']}/{f['truth_current']}",
            f"{nav['on_wiki']}/{nav['probes']}", navigation._kb(nav["median_bytes"]), str(nav["within_20kb_share"]),
            f"{r['catalogs']['largest_kb']} KB", f"{r['concepts']['found']}/{r['concepts']['concepts']}",
            f"{s['found']}/{s['stale']}, {len(s['false'])} false" if s else "-"]) + " |")
    if verbose:
        for r in results:
            if "error" in r:
                continue
            out += ["", f"## {r['set']}", ""]
            out += [f"- title: {p}: truth {want!r}, page {got!r}" for p, want, got in r["titles"]["wrong"]]
            out += [f"- titles shared by several pages: {r['titles']['titles_shared']}"] if r["titles"]["titles_shared"] else []
            out += [f"- markup: {e}" for e in r["markup"]["examples"]]
            out += [f"- mangled: {e}" for e in r["mangled"]["examples"]]
            out += [f"- table concept: {e}" for e in r["tables"]["examples"]]
            out += [f"- timeline wrong: {e}" for e in r["facts"]["wrong"]]
            out += [f"- timeline from a non-product line: {e}" for e in r["facts"]["from_non_product_lines"]]
            out += [f"- timeline not in the truth: {e}" for e in r["facts"]["unmatched"]]
            out += [f"- fact without a timeline: {e}" for e in r["facts"].get("missed", [])]
            out += [f"- off the wiki: {', '.join(r['navigation']['off_wiki'])}"] if r["navigation"]["off_wiki"] else []
            out += [f"- concept missed: {', '.join(r['concepts']['missed'])}"] if r["concepts"]["missed"] else []
            if "stale_notes" in r:
                out += [f"- stale note missed: {e}" for e in r["stale_notes"]["missed"]]
                out += [f"- false finding on a note: {e}" for e in r["stale_notes"]["false"]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("fetch", "compile", "score", "all"))
    parser.add_argument("sets", nargs="*", help=f"default: every set ({', '.join(sets())})")
    parser.add_argument("--dest", type=Path, default=None, help="where sets are laid out and compiled")
    parser.add_argument("--notes", action="store_true", help="also lint a copy with the team's notes in raw/notes/")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument("-v", "--verbose", action="store_true", help="list what is wrong, set by set")
    args = parser.parse_args(argv)
    chosen = args.sets or sets()
    unknown = [s for s in chosen if s not in sets()]
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(sets())}")
    dest = dest_root(args.dest)
    results: list[dict[str, Any]] = []
    failed = False
    for name in chosen:
        try:
            if args.action in ("fetch", "all"):
                fetch(name, dest)
            if args.action in ("compile", "all"):
                print(f"compiling {name} ...", file=sys.stderr)
                compile_set(name, dest)
            if args.action in ("score", "all"):
                results.append(score(name, dest, args.notes))
        except (OSError, RuntimeError, subprocess.CalledProcessError, navigation.CompileError) as exc:
            failed = True
            results.append({"set": name, "error": str(exc)})
            print(f"heldout: {name}: {exc}", file=sys.stderr)
    if args.json:
        contract.emit("heldout", figure_rows(results), results=results)
    elif results:
        print(markdown(results, args.verbose))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
