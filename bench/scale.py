"""Deterministic scale workspaces (1k, 10k sources) built from the paragraphs of the real corpora.

The three corpora in ../shared/corpus hold 187 sources; a wiki of 10k pages has to be
generated. Each generated source is a short Markdown note: a title, two or three
sections, and paragraphs drawn from the corpora, so the text (vocabulary, figures,
code spans, emphasis) is real writing and concepts recur across notes the way they
do in a real collection.

Deterministic and prefix-stable: note i depends only on (seed, i) and the corpus
text, never on how many notes are generated. So note 0 of the 100-note workspace
is byte-identical to note 0 of the 10k-note one, which lets the harness apply the
same edit at two scales and compare.

    python bench/scale.py /tmp/ws10k --sources 10000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
CORPORA = ("topics", "versions", "formats")
# the formats whose raw text is close enough to Markdown prose to quote paragraph by paragraph
TEXT_SUFFIXES = {".md", ".txt", ".rst", ".article", ".slide"}
PER_FOLDER = 100  # notes per folder: raw/gen/000/, raw/gen/001/, ...

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,4}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Pool:
    """The corpus text a generator draws from: prose paragraphs and section headings."""

    paragraphs: tuple[str, ...]
    headings: tuple[str, ...]
    fingerprint: str  # sha256 over the pool, so a result says which text it was built from


def corpus_root() -> Path:
    return CORPUS


def corpus_files(root: Path | None = None) -> list[Path]:
    """Every source file of the three corpora (the 187-source workload), in a stable order."""
    base = root or CORPUS
    files: list[Path] = []
    for name in CORPORA:
        raw = base / name / "raw"
        if raw.is_dir():
            files.extend(sorted(p for p in raw.rglob("*") if p.is_file()))
    return files


def _blocks(text: str) -> list[str]:
    """Blank-line separated blocks outside code fences."""
    blocks: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        if fenced:
            continue
        if line.strip():
            current.append(line.rstrip())
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return blocks


def _is_prose(block: str) -> bool:
    # indented (code, literal blocks), markup, tables, quotes, directives: not prose
    if block[:1] in " \t" or block[:1] in "#<|{[>!:.=-*~+" or block.startswith(("..", "$ ")):
        return False
    words = block.split()
    # real sentences: long enough to carry a fact, short enough not to be a whole page
    return 12 <= len(words) <= 220 and any(c in block for c in ".!?")


@lru_cache(maxsize=4)
def load_pool(root: Path | None = None) -> Pool:
    """Paragraphs and headings of the corpora's text files, deduplicated, in a stable order."""
    paragraphs: dict[str, None] = {}
    headings: dict[str, None] = {}
    for file in corpus_files(root):
        if file.suffix.lower() not in TEXT_SUFFIXES:
            continue
        text = file.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        for block in _blocks(text):
            heading = _HEADING.match(block)
            if heading and "\n" not in block:
                title = re.sub(r"[`*_{}<>\[\]#]", "", heading.group(1)).strip()
                if 2 <= len(title.split()) <= 8:
                    headings[title] = None
            elif _is_prose(block):
                paragraphs[block] = None
    if not paragraphs or not headings:
        raise SystemExit(f"no corpus text found under {root or CORPUS} (../shared/corpus is absent?)")
    digest = hashlib.sha256()
    for item in (*paragraphs, "\x00", *headings):
        digest.update(item.encode("utf-8") + b"\x00")
    return Pool(tuple(paragraphs), tuple(headings), digest.hexdigest()[:16])


def note_path(i: int) -> str:
    """Raw path of note i, relative to raw/."""
    return f"gen/{i // PER_FOLDER:03d}/note-{i:05d}.md"


def note_text(i: int, pool: Pool, seed: int = 0) -> str:
    """The Markdown of note i: depends only on (seed, i) and the pool."""
    rng = random.Random(f"wikimem-bench:{seed}:{i}")
    title = rng.choice(pool.headings)
    parts = [f"# {title} (note {i})", ""]
    for section in range(rng.randint(2, 3)):
        if section:
            parts += [f"## {rng.choice(pool.headings)}", ""]
        for _ in range(rng.randint(1, 3)):
            parts += [rng.choice(pool.paragraphs), ""]
    return "\n".join(parts)


def edit_text(original: str, k: int, pool: Pool) -> str:
    """The k-th deterministic edit of a note: one more paragraph at the end."""
    rng = random.Random(f"wikimem-bench-edit:{k}")
    return original.rstrip("\n") + "\n\n## Added in edit " + str(k) + "\n\n" + rng.choice(pool.paragraphs) + "\n"


def write_notes(raw: Path, count: int, *, seed: int = 0, pool: Pool | None = None) -> int:
    """Write notes 0..count-1 under raw/ (skipping files already identical); returns bytes total."""
    pool = pool or load_pool()
    total = 0
    for i in range(count):
        target = raw / note_path(i)
        data = note_text(i, pool, seed).encode("utf-8")
        total += len(data)
        if target.exists() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return total


def build(root: Path, count: int, *, seed: int = 0) -> Path:
    """A fresh initialized workspace at `root` with `count` generated notes in raw/ (not compiled)."""
    from wikimem.init import init_workspace
    from wikimem.workspace import Workspace

    ws = Workspace.at(root)
    init_workspace(ws)
    write_notes(ws.raw, count, seed=seed)
    return ws.root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="workspace folder to create (raw/ is filled, not compiled)")
    parser.add_argument("--sources", type=int, default=1000, help="how many notes (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    root = build(args.root, args.sources, seed=args.seed)
    pool = load_pool()
    print(f"{root}: {args.sources} notes from {len(pool.paragraphs)} paragraphs "
          f"(pool {pool.fingerprint})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
