"""Navigation cost: the bytes an agent reads from wiki/index.md to the page that holds an answer.

    python bench/navigation.py                            # every probed corpus, plus all of them together
    python bench/navigation.py --corpora sphinx --json    # one corpus, one JSON document on stdout
    python bench/navigation.py --wiki ~/ws --json         # an already-compiled workspace
    python bench/navigation.py --wiki ~/ws --probes q.jsonl  # any workspace, with your own questions

The figure of issues 13 and 14. For each probe of `probes-public.jsonl` and
`sphinx/probes-public.jsonl` under --corpus-root (a question, the raw source and the
evidence text copied verbatim from it):

- Workspace. Each probed corpus is compiled alone (`wikimem init`, its raw/ copied in,
  `wikimem compile` with the offline backend, SOURCE_DATE_EPOCH pinned, ANTHROPIC_*
  removed), and once more all together with each corpus's raw/ as a top folder
  (raw/topics/..., raw/sphinx/...), reported as corpus "all". Everything is built in a
  temporary folder, removed at the end unless --keep. `--wiki DIR` measures a compiled
  workspace instead; the probes it answers are those whose source file is in DIR/raw,
  laid out either way. `--probes FILE` (repeatable) takes the probes from FILE instead, in the
  same format, e.g. questions written for a documentation set nobody tuned to: with --wiki
  any workspace, without it each probed corpus under --corpus-root is compiled.
- Evidence lines. The 1-based line range [a, b] the evidence spans in its raw file,
  matched on white-space-normalized text; when the whole text is not there, the
  evidence's longest line. A probe neither locates is "not located".
- Holding the evidence. A wiki page holds it when it cites the raw file at a line in
  [a, b] (a relative Markdown link to the file with `#L<n>`, or a `#L<n>-L<m>` range
  that overlaps), or when it quotes it: the evidence's lowercase words
  (`re.findall(r"\\w+", ...)`), or any run of 12 consecutive of them when it has more,
  appear as a contiguous run of the page's words. Markup (backquotes, `_x_`, `**`) does
  not matter to words: `\\w` counts "_" as a letter, so leading and trailing "_" are
  trimmed from each word ("_rust_" is "rust", `SESSION_COOKIE` stays one word). Link
  destinations (`](target)`) are dropped from both texts first, so a link the source
  wraps around a word, or the page does, does not break a run a reader sees as
  contiguous.
- Navigation cost. The agent reads wiki/index.md, then follows the wiki's own relative
  links between Markdown pages inside wiki/ (inline `[text](target)` and reference
  definitions `[ref]: target`; links into raw/ and to the web are not followed). A
  path costs the byte size of every page read on it, index.md included; Dijkstra with
  the page size as node weight gives the cheapest path to any page that holds the
  evidence. Its "index share" is the bytes of index.md and catalogs (files named
  index.md or index-*.md anywhere in wiki/) read on that path before its first other
  page.
- Grep baseline, same run. An agent that greps raw/ instead reads the output of
  `grep -rn -i WORD raw` run from the workspace root, WORD being the probe's most
  specific word (the longest `\\w+` word of the answer, or of the question when the
  answer has none of at least 4 characters), then a window of the source file: lines
  a-20 to b+20 around the evidence (the first 40 lines when it is not located).

Figures per corpus and "overall" (the probes of the per-corpus workspaces pooled; the
combined workspace is its own row): probes, located, evidence on some wiki page, reachable
from index.md, median navigation bytes (an unreachable probe counts as infinite, so the
median is null when half the probes are unreachable), the share within 20 KB (20,000
bytes, the unit of the index caps), the median index share (reachable probes), the median
grep bytes, median navigation / median grep, and per workspace index.md's size and the
largest catalog's. Goals (issues 13, 14, 36): median
under 8 KB, 90% within 20 KB, evidence on a wiki page for 90%, index share at most 6 KB, no
catalog over 6 KB.

Markdown tables on stdout by default, progress on stderr; --json prints exactly one JSON
document, the bench contract (bench/contract.py): {"bench": "navigation", "rows": [...],
"figures": {corpus: {...}}, "samples": [...]}; its rows are the figures against their goals
(every figure for "overall" and "all", or for the one corpus measured; the median alone
for each corpus of a pooled run). Exit 0, or 1 when a corpus could not be measured (its
figures carry "error").
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import contract  # noqa: E402 - bench/contract.py, next to this file

DEFAULT_CORPUS = HERE.parent.parent / "shared" / "corpus"
PROBE_FILES = ("probes-public.jsonl", "*/probes-public.jsonl")
COMBINED = "all"
OVERALL = "overall"
QUOTE_RUN = 12  # words of evidence that must appear together on a page
WITHIN = 20_000  # bytes; "20 KB" as the index caps count it (index_page.MAX_BYTES = 25_000)
WINDOW = 20  # lines either side of the evidence the grep agent reads
SPECIFIC = 4  # an answer word shorter than this is not specific enough to grep for

WORD = re.compile(r"\w+")
# link text may hold one level of brackets and escapes ("[\[derive\] ...](index-1.md)");
# a destination may hold one level of balanced parentheses
_TEXT = r"\[(?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*\])*\]"
_DEST = r"<[^<>\n]*>|(?:[^\s()<>]|\([^\s()]*\))+"
INLINE_LINK = re.compile(_TEXT + r"\(\s*(" + _DEST + r")(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"(?m)^ {0,3}\[[^\]\n]+\]:\s*(" + _DEST + r")")
LINK_DESTINATION = re.compile(r"\]\(\s*(?:" + _DEST + r")?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
LINE_ANCHOR = re.compile(r"^L(\d+)(?:-L?(\d+))?$")
CATALOG = re.compile(r"^index(?:-\d+)*\.md$")  # as wikimem names them (naming.CATALOG_NAME): not a part page "index-generating-markup.md"


# ---------------------------------------------------------------- probes and evidence


@dataclass(frozen=True)
class Probe:
    id: str
    corpus: str
    kind: str
    question: str
    answer: str
    source: str  # relative to the corpus root: "topics/raw/ch04-01-what-is-ownership.md"
    evidence: str

    @property
    def inner(self) -> str:
        """The source's path inside its corpus's raw/ folder."""
        parts = self.source.split("/")
        return "/".join(parts[2:] if len(parts) > 2 and parts[1] == "raw" else parts[1:])


def load_probes(corpus_root: Path, files: Sequence[Path] = ()) -> list[Probe]:
    """The probes of `files` when given, else of the probe files under corpus_root."""
    probes: list[Probe] = []
    seen: set[str] = set()
    paths = list(files) or [path for pattern in PROBE_FILES for path in sorted(corpus_root.glob(pattern))]
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if item["id"] in seen:
                continue
            seen.add(item["id"])
            source = item["source"]
            probes.append(Probe(
                id=item["id"],
                # sphinx/probes-public.jsonl names no corpus: its sources say which
                corpus=item.get("corpus") or source.split("/")[0],
                kind=item.get("kind", ""),
                question=item.get("question", ""),
                answer=str(item.get("answer") or ""),
                source=source,
                evidence=item["evidence"],
            ))
    return probes


def locate(text: str, evidence: str) -> tuple[int, int] | None:
    """The 1-based line range the evidence spans in text, matched with white space normalized.

    Falls back to the evidence's longest line when the whole text is not found (a probe
    copied from a rendering that wrapped or trimmed it); None when neither is there.
    """
    tokens = list(re.finditer(r"\S+", text))
    starts: list[int] = []
    offset = 0
    for token in tokens:
        starts.append(offset)
        offset += len(token.group()) + 1
    flat = " ".join(token.group() for token in tokens)
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line(index: int) -> int:
        return bisect.bisect_left(newlines, tokens[index].start()) + 1

    longest = max(evidence.splitlines() or [""], key=lambda s: len(s.strip()))
    for needle in dict.fromkeys((" ".join(evidence.split()), " ".join(longest.split()))):
        at = flat.find(needle) if needle else -1
        if at >= 0:
            first = bisect.bisect_right(starts, at) - 1
            last = bisect.bisect_right(starts, at + len(needle) - 1) - 1
            return line(first), line(last)
    return None


# a code span's highlighting language (`#!py3 True`): markup, as a page shows the code alone
INLINE_LANGUAGE = re.compile(r"`#![A-Za-z][\w+-]*[ \t]+")


def words(text: str) -> list[str]:
    # \w includes "_", so Markdown emphasis would glue to its word ("_rust_", "(RAII)_"):
    # trimmed, that markup does not matter and snake_case names stay one word
    text = INLINE_LANGUAGE.sub("`", text) if "`#!" in text else text
    found = (w.strip("_") for w in WORD.findall(LINK_DESTINATION.sub("]", text).lower()))
    return [w for w in found if w]


@dataclass(frozen=True)
class Evidence:
    """What makes a page hold one probe's evidence: a citation of `raw` in `lines`, or a quote."""

    raw: Path
    lines: tuple[int, int] | None
    text: str
    grams: frozenset[tuple[str, ...]] = field(init=False)

    def __post_init__(self) -> None:
        ws = words(self.text)
        n = min(QUOTE_RUN, len(ws))
        grams = frozenset(tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)) if n else frozenset()
        object.__setattr__(self, "grams", grams)


# ---------------------------------------------------------------- the wiki as a graph


@dataclass
class Page:
    size: int
    words: list[str]
    links: set[str]  # wiki pages, by path relative to wiki/
    cites: list[tuple[str, int, int]]  # (normalized absolute raw path, first line, last line)


@dataclass
class Wiki:
    root: Path  # the workspace: wiki/ and raw/ inside
    pages: dict[str, Page]

    @classmethod
    def read(cls, root: Path) -> Wiki:
        wiki = root / "wiki"
        base = os.path.normpath(os.path.abspath(wiki))
        pages: dict[str, Page] = {}
        for path in sorted(wiki.rglob("*.md")):
            rel = path.relative_to(wiki)
            if any(part.startswith(".") for part in rel.parts) or not path.is_file():
                continue
            data = path.read_bytes()
            text = data.decode("utf-8", errors="replace")
            here = os.path.dirname(os.path.join(base, *rel.parts))
            links: set[str] = set()
            cites: list[tuple[str, int, int]] = []
            for target in [m.group(1) for m in INLINE_LINK.finditer(text)] + \
                          [m.group(1) for m in REFERENCE.finditer(text)]:
                resolved = _resolve(here, target)
                if resolved is None:
                    continue
                target_path, fragment = resolved
                anchor = LINE_ANCHOR.match(fragment)
                if anchor:
                    first = int(anchor.group(1))
                    last = int(anchor.group(2) or first)
                    cites.append((target_path, min(first, last), max(first, last)))
                inside = os.path.relpath(target_path, base)
                if target_path.endswith(".md") and not inside.startswith(".."):
                    links.add(Path(inside).as_posix())
            pages[rel.as_posix()] = Page(size=len(data), words=words(text), links=links, cites=cites)
        for page in pages.values():
            page.links &= pages.keys()  # a link to a missing page costs nothing and leads nowhere
        return cls(root=root, pages=pages)


def _resolve(here: str, target: str) -> tuple[str, str] | None:
    """A relative link's target as a normalized absolute path and its fragment; None for others."""
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1].strip()
    if not target or target.startswith(("#", "/")) or SCHEME.match(target):
        return None  # same-page anchors, site-absolute paths and URLs are not files of the workspace
    path, _, fragment = target.partition("#")
    path = unquote(path.partition("?")[0])
    if not path:
        return None
    return os.path.normpath(os.path.join(here, path)), unquote(fragment)


def holders_all(wiki: Wiki, evidences: Sequence[Evidence]) -> list[set[str]]:
    """For each evidence, the wiki pages that hold it; one pass over each page's words."""
    found: list[set[str]] = [set() for _ in evidences]
    by_raw: dict[str, list[int]] = {}
    by_first: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for i, ev in enumerate(evidences):
        if ev.lines is not None:
            by_raw.setdefault(os.path.normpath(os.path.abspath(ev.raw)), []).append(i)
        for gram in ev.grams:
            by_first.setdefault(gram[0], []).append((i, gram))
    for name, page in wiki.pages.items():
        for target, first, last in page.cites:
            for i in by_raw.get(target, ()):
                a, b = evidences[i].lines  # type: ignore[misc]
                if first <= b and last >= a:
                    found[i].add(name)
        ws = page.words
        for at, word in enumerate(ws):
            for i, gram in by_first.get(word, ()):
                if name not in found[i] and tuple(ws[at:at + len(gram)]) == gram:
                    found[i].add(name)
    return found


def holders(wiki: Wiki, evidence: Evidence) -> set[str]:
    return holders_all(wiki, [evidence])[0]


def is_catalog(name: str) -> bool:
    return bool(CATALOG.match(name.rsplit("/", 1)[-1]))


@dataclass(frozen=True)
class Route:
    bytes: int  # every page read, index.md included
    index_bytes: int  # index.md and catalogs read before the first other page
    page: str  # the page reached, relative to wiki/
    path: tuple[str, ...]


def cheapest(wiki: Wiki, targets: Iterable[str], start: str = "index.md") -> Route | None:
    """Dijkstra from start over the wiki's links, each page costing its size; None if no target is reachable."""
    goal = set(targets)
    if start not in wiki.pages or not goal:
        return None
    dist = {start: wiki.pages[start].size}
    before: dict[str, str] = {}
    heap = [(dist[start], start)]
    done: set[str] = set()
    while heap:
        cost, name = heapq.heappop(heap)
        if name in done:
            continue
        done.add(name)
        if name in goal:
            path = [name]
            while path[-1] in before:
                path.append(before[path[-1]])
            path.reverse()
            index_bytes = 0
            for step in path:
                if not is_catalog(step):
                    break
                index_bytes += wiki.pages[step].size
            return Route(bytes=cost, index_bytes=index_bytes, page=name, path=tuple(path))
        for nxt in sorted(wiki.pages[name].links):
            new = cost + wiki.pages[nxt].size
            if nxt not in done and new < dist.get(nxt, math.inf):
                dist[nxt] = new
                before[nxt] = name
                heapq.heappush(heap, (new, nxt))
    return None


# ---------------------------------------------------------------- the grep baseline


def grep_word(probe: Probe) -> str:
    """The probe's most specific word: the answer's longest, else the question's."""
    for text in (probe.answer, probe.question):
        candidates = WORD.findall(text)
        best = max(candidates, key=len, default="")
        if len(best) >= SPECIFIC:
            return best
    return max(WORD.findall(probe.question + " " + probe.answer), key=len, default="")


def grep_bytes(root: Path, word: str, raw_file: Path, lines: tuple[int, int] | None) -> int:
    output = 0
    if word:
        done = subprocess.run(["grep", "-rn", "-i", "--", word, "raw"], cwd=root, capture_output=True, check=False)
        output = len(done.stdout)
    if not raw_file.is_file():
        return output
    content = raw_file.read_bytes().splitlines(keepends=True)
    # not located: the agent has no better place to look than the top of the file
    first, last = (max(1, lines[0] - WINDOW), lines[1] + WINDOW) if lines else (1, 2 * WINDOW)
    return output + sum(len(line) for line in content[first - 1:last])


# ---------------------------------------------------------------- measuring a workspace


@dataclass(frozen=True)
class Sample:
    id: str
    corpus: str  # the workspace measured: a corpus name, or "all"
    kind: str
    located: bool
    on_wiki: bool
    bytes: int | None
    index_bytes: int | None
    grep_bytes: int
    page: str | None
    source: str
    lines: list[int] | None
    grep_word: str
    path: list[str] | None


def measure(root: Path, label: str, probes: Sequence[Probe], combined: bool) -> list[Sample]:
    wiki = Wiki.read(root)
    raws = [root / "raw" / p.corpus / p.inner if combined else root / "raw" / p.inner for p in probes]
    evidences = []
    for probe, raw in zip(probes, raws, strict=True):
        text = raw.read_text(encoding="utf-8", errors="replace") if raw.is_file() else ""
        evidences.append(Evidence(raw=raw, lines=locate(text, probe.evidence) if text else None, text=probe.evidence))
    samples = []
    for probe, raw, ev, held in zip(probes, raws, evidences, holders_all(wiki, evidences), strict=True):
        route = cheapest(wiki, held)
        word = grep_word(probe)
        samples.append(Sample(
            id=probe.id, corpus=label, kind=probe.kind, located=ev.lines is not None, on_wiki=bool(held),
            bytes=route.bytes if route else None, index_bytes=route.index_bytes if route else None,
            grep_bytes=grep_bytes(root, word, raw, ev.lines), page=route.page if route else None,
            source=probe.source, lines=list(ev.lines) if ev.lines else None, grep_word=word,
            path=list(route.path) if route else None,
        ))
    return samples


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    m = statistics.median(values)
    return None if math.isinf(m) else m


def figures(samples: Sequence[Sample]) -> dict[str, Any]:
    n = len(samples)
    nav = [s.bytes if s.bytes is not None else math.inf for s in samples]
    grep = [s.grep_bytes for s in samples]
    median_nav, median_grep = _median(nav), _median(grep)
    return {
        "probes": n,
        "located": sum(s.located for s in samples),
        "on_wiki": sum(s.on_wiki for s in samples),
        "on_wiki_share": round(sum(s.on_wiki for s in samples) / n, 3) if n else None,
        "reachable": sum(s.bytes is not None for s in samples),
        "median_bytes": median_nav,
        "within_20kb_share": round(sum(b <= WITHIN for b in nav) / n, 3) if n else None,
        "median_index_bytes": _median([s.index_bytes for s in samples if s.index_bytes is not None]),
        "median_grep_bytes": median_grep,
        "nav_grep_ratio": round(median_nav / median_grep, 2) if median_nav is not None and median_grep else None,
    }


# ---------------------------------------------------------------- building workspaces


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ANTHROPIC_") and k not in ("WIKIMEM_BACKEND", "WIKIMEM_ROOT")}
    env["SOURCE_DATE_EPOCH"] = "1798675200"
    return env


def _wikimem() -> list[str]:
    exe = shutil.which("wikimem") or str(Path(sys.executable).with_name("wikimem"))
    return [exe] if Path(exe).exists() else [sys.executable, "-m", "wikimem.cli"]


class CompileError(RuntimeError):
    pass


def build(root: Path, folders: dict[str, Path] | Path) -> None:
    """A compiled workspace at root whose raw/ is a copy of one raw folder, or of several as top folders."""
    env = _environment()
    subprocess.run([*_wikimem(), "init", "--quiet", str(root)], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    shutil.rmtree(root / "raw")
    if isinstance(folders, Path):
        shutil.copytree(folders, root / "raw")
    else:
        (root / "raw").mkdir()
        for name, folder in folders.items():
            shutil.copytree(folder, root / "raw" / name)
    command = [*_wikimem(), "compile", "--root", str(root), "--backend", "offline", "--quiet"]
    for attempt in (1, 2):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return
        # others change the compiler while this runs: a failure may be transient, so once more
        error = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
        print(f"  wikimem compile failed (attempt {attempt}): {error}", file=sys.stderr)
    raise CompileError(f"wikimem compile --root {root}: exit {done.returncode}: {error}")


def workspace_of(path: Path) -> Path:
    """Accept a workspace root or its wiki/ folder."""
    if (path / "wiki" / "index.md").is_file():
        return path
    if (path / "index.md").is_file() and path.name == "wiki":
        return path.parent
    return path


def probes_in(root: Path, probes: Sequence[Probe]) -> tuple[list[Probe], bool]:
    """The probes a compiled workspace answers, and whether its raw/ holds corpora as top folders."""
    combined = [p for p in probes if (root / "raw" / p.corpus / p.inner).is_file()]
    single = [p for p in probes if (root / "raw" / p.inner).is_file()]
    return (combined, True) if len(combined) > len(single) else (single, False)


# ---------------------------------------------------------------- output


def _kb(value: float | None) -> str:
    return "∞" if value is None else f"{value / 1000:.1f} KB"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def markdown(report: dict[str, Any]) -> str:
    out = ["## Navigation cost: bytes read from wiki/index.md to the page holding the evidence", "",
           "| corpus | probes | located | evidence on wiki | reachable | median nav | within 20 KB "
           "| median index share | median grep | nav / grep | index.md | largest catalog |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, fig in report["figures"].items():
        if "error" in fig:
            out.append(f"| {name} | error: {fig['error']} |||||||||||")
            continue
        index_md = "—" if fig.get("index_md_bytes") is None else _kb(fig["index_md_bytes"])
        largest = "—" if fig.get("largest_catalog") is None else _kb(fig["largest_catalog_bytes"])
        ratio = "—" if fig["nav_grep_ratio"] is None else f"{fig['nav_grep_ratio']:.2f}x"
        out.append(
            f"| {name} | {fig['probes']} | {fig['located']} | {fig['on_wiki']} ({_share(fig['on_wiki_share'])}) "
            f"| {fig['reachable']} | {_kb(fig['median_bytes'])} | {_share(fig['within_20kb_share'])} "
            f"| {_kb(fig['median_index_bytes']) if fig['median_index_bytes'] is not None else '—'} "
            f"| {_kb(fig['median_grep_bytes'])} | {ratio} | {index_md} | {largest} |")
    out += ["", "Goals (issues 13, 14, 36): median nav < 8 KB, 90% within 20 KB, evidence on wiki for 90%, "
            "median index share ≤ 6 KB, no catalog over 6 KB.", "",
            "| probe | corpus | kind | lines | on wiki | nav | index share | grep | grep word | page reached |",
            "|---|---|---|---|---|---:|---:|---:|---|---|"]
    for s in report["samples"]:
        lines = f"{s['lines'][0]}-{s['lines'][1]}" if s["lines"] else "not located"
        out.append(f"| {s['id']} | {s['corpus']} | {s['kind']} | {lines} | {'yes' if s['on_wiki'] else 'no'} "
                   f"| {_kb(s['bytes'])} | {_kb(s['index_bytes']) if s['index_bytes'] is not None else '—'} "
                   f"| {_kb(s['grep_bytes'])} | `{s['grep_word']}` | {s['page'] or '—'} |")
    lost = sorted({f"{s['id']} ({s['source']})" for s in report["samples"] if not s["located"]})
    out += ["", "Not located in their raw file: " + (", ".join(lost) if lost else "none") + "."]
    return "\n".join(out)


def _kb_value(value: float | None) -> float | None:
    return None if value is None else round(value / 1000, 2)


def figure_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The contract's rows: each figure against its goal (issues 13, 14)."""
    figs = report["figures"]
    pooled = [name for name in (OVERALL, COMBINED) if name in figs]
    rows = []
    for name, fig in figs.items():
        if "error" in fig:
            rows.append(contract.row(f"navigation, {name}", status="error", note=str(fig["error"])[:300]))
            continue
        probes = f"{fig['probes']} probes"
        median = fig["median_bytes"]
        rows.append(contract.row(
            f"navigation median bytes to the evidence, {name}", _kb_value(median), "KB",
            "grep -rn raw/ + 40 lines around it", _kb_value(fig["median_grep_bytes"]), "≤ 8 KB", goal_abs=8.0,
            status="over" if median is None else None,
            note=f"{probes}; {fig['reachable']} reachable from index.md"
                 + ("; half or more unreachable" if median is None else "")))
        if pooled and name not in pooled:
            continue  # a corpus of a pooled run: its median; the goals are judged on the pool
        for key, label in (("within_20kb_share", "navigation within 20 KB"), ("on_wiki_share", "evidence on a wiki page")):
            share = fig[key]
            rows.append(contract.row(
                f"{label}, {name}", None if share is None else round(100 * share, 1), "%", goal="≥ 90%",
                status="over" if share is None or share < 0.9 else "ok", note=probes))
        index = fig["median_index_bytes"]
        rows.append(contract.row(
            f"navigation median index share, {name}", _kb_value(index), "KB", goal="≤ 6 KB", goal_abs=6.0,
            status="over" if index is None else None,
            note="index.md and catalogs read before the first other page (reachable probes)"))
        if fig.get("largest_catalog") is not None:
            largest = fig["largest_catalog_bytes"]
            rows.append(contract.row(
                f"largest catalog, {name}", _kb_value(largest), "KB", goal="≤ 6 KB", goal_abs=6.0,
                note=f"{fig['largest_catalog']}; {fig['catalogs_over_6kb']} catalogs over 6 KB"))
    return rows


# ---------------------------------------------------------------- command line


def catalog_sizes(root: Path) -> dict[str, Any]:
    """index.md's size and the largest catalog's (index-*.md or a folder's index.md in wiki/)."""
    wiki = root / "wiki"
    index = wiki / "index.md"
    catalogs = [(f.stat().st_size, f.relative_to(wiki).as_posix()) for f in wiki.rglob("*.md")
                if is_catalog(f.name) and f != index and f.is_file()]
    largest = max(catalogs, default=(0, None))
    return {"index_md_bytes": index.stat().st_size if index.is_file() else None,
            "largest_catalog_bytes": largest[0], "largest_catalog": largest[1],
            "catalogs_over_6kb": sum(size > 6000 for size, _ in catalogs)}


def run(corpus_root: Path, corpora: Sequence[str] | None, wikis: Sequence[Path], work: Path,
        probe_files: Sequence[Path] = ()) -> dict[str, Any]:
    probes = load_probes(corpus_root, probe_files)
    names = list(dict.fromkeys(p.corpus for p in probes))
    wanted = list(corpora) if corpora else [*names, COMBINED]
    figures_: dict[str, Any] = {}
    samples: list[Sample] = []
    measured: list[tuple[str, Path, list[Probe], bool]] = []
    if wikis:
        for folder in wikis:
            root = workspace_of(folder)
            chosen, combined = probes_in(root, probes)
            if corpora:
                chosen = [p for p in chosen if p.corpus in corpora]
            present = sorted({p.corpus for p in chosen})
            label = COMBINED if combined and len(present) > 1 else (present[0] if len(present) == 1 else root.name)
            while label in (m[0] for m in measured):
                label = f"{label} ({root.name})" if root.name not in label else label + "'"
            measured.append((label, root, chosen, combined))
    else:
        for name in [n for n in names if n in wanted]:
            raw = corpus_root / name / "raw"
            chosen = [p for p in probes if p.corpus == name]
            print(f"compiling {name} ({raw}) ...", file=sys.stderr)
            try:
                build(work / name, raw)
            except (CompileError, subprocess.CalledProcessError, OSError) as exc:
                figures_[name] = {"error": str(exc)}
                continue
            measured.append((name, work / name, chosen, False))
        together = [n for n in names if n in wanted] if COMBINED in wanted else []
        if len(together) > 1:
            print(f"compiling {COMBINED} ({', '.join(together)} as top folders of raw/) ...", file=sys.stderr)
            try:
                build(work / COMBINED, {n: corpus_root / n / "raw" for n in together})
                measured.append((COMBINED, work / COMBINED, [p for p in probes if p.corpus in together], True))
            except (CompileError, subprocess.CalledProcessError, OSError) as exc:
                figures_[COMBINED] = {"error": str(exc)}
    pooled: list[Sample] = []
    for label, root, chosen, combined in measured:
        print(f"measuring {label}: {len(chosen)} probes ...", file=sys.stderr)
        got = measure(root, label, chosen, combined)
        figures_[label] = {**figures(got), **catalog_sizes(root)}
        samples += got
        if label != COMBINED:
            pooled += got
    if len([m for m in measured if m[0] != COMBINED]) > 1:
        figures_[OVERALL] = figures(pooled)
    return {"bench": "navigation", "figures": figures_, "samples": [asdict(s) for s in samples]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-root", type=Path, default=DEFAULT_CORPUS,
                        help="folder holding probes-public.jsonl and the corpora (default: ../shared/corpus)")
    parser.add_argument("--wiki", type=Path, action="append", default=[], metavar="DIR",
                        help="measure this compiled workspace instead of compiling the corpora (repeatable)")
    parser.add_argument("--probes", type=Path, action="append", default=[], metavar="FILE",
                        help="probe file (JSON lines, the format of probes-public.jsonl) to measure instead of "
                             "the corpora's own (repeatable); with --wiki, any workspace whose raw/ holds the sources")
    parser.add_argument("--corpora", default="",
                        help=f"comma-separated corpora to run, '{COMBINED}' for the combined workspace "
                             f"(default: every probed corpus and '{COMBINED}')")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument("--keep", action="store_true", help="keep the temporary workspaces")
    args = parser.parse_args(argv)
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()] or None

    def fail(message: str) -> int:
        if args.json:
            contract.emit("navigation", [contract.row("navigation", status="error", note=message)],
                          error=message, figures={}, samples=[])
        else:
            print(f"navigation: {message}", file=sys.stderr)
        return 1

    missing = [str(f) for f in args.probes if not f.is_file()]
    if missing:
        return fail(f"no probe file {', '.join(missing)}")
    if not args.probes and (not args.corpus_root.is_dir() or not load_probes(args.corpus_root)):
        return fail(f"no probes-public.jsonl under {args.corpus_root}: pass --corpus-root or --probes")
    if args.probes and not load_probes(args.corpus_root, args.probes):
        return fail(f"no probes in {', '.join(map(str, args.probes))}")
    work = Path(tempfile.mkdtemp(prefix="wikimem-nav-"))
    try:
        report = run(args.corpus_root, corpora, args.wiki, work, args.probes)
    finally:
        if args.keep:
            print(f"workspaces kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        contract.emit("navigation", figure_rows(report), figures=report["figures"], samples=report["samples"])
    else:
        print(markdown(report))
    return 1 if any("error" in f for f in report["figures"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
