"""The memory tool the model edits the wiki with: `/memories` is `wiki/`, every write is staged.

The model sees the Claude memory tool (`memory_20250818`): view, create, str_replace,
insert, delete, rename. What every wikimem memory tool shares (paths, the numbered view, one
call that never raises for bad input) is memory_tool.MemoryTool; this module supplies the
storage and the guards of the compile's.

Writes never touch the disk. They land in an overlay with two layers: `pending`
(what the model did for the source being compiled) over `committed` (what earlier
sources of this run did), reading through to the real wiki. When a source finishes
and its pages validate, `commit()` folds pending into committed; when it fails,
`discard()` drops it, so a failed or truncated source leaves no trace. After the
batch, `page_edits()` turns the committed layer into PageEdits, which the compiler
guards and writes like any other backend's.

Guards, each answered to the model as a tool error it can read (ToolError):
- no path outside wiki/ (`..`, absolute paths, symlinks);
- index.md, log.md, lint.md and the catalogs are written by code: view only;
- AGENTS.md belongs to the user: view only;
- a page a person edited since wikimem wrote it: str_replace/insert only;
- source pages belong to their sources: the model creates only its own source's page;
- existing pages are edited in place, never overwritten, deleted or renamed, and an edit
  may not remove more than half of a page that other sources built. Whatever a source
  says, compiling it can only change its own page and add to the others;
- pages going away with a removed source are view only. Tidying up after a removal (a
  session with no source text) may delete the concept pages that drew only on it.

Several conversations run at once (one per source, `concurrency` in wikimem.toml). Each has
its own overlay (its `pending` layer) over one shared `Store` (the `committed` layer), so:
- a command runs on the page as it is when it runs: before each command the conversation's
  own edits to that page are merged onto what other conversations committed since
  (`Overlay.refresh`, a three-way merge), and a view shows that text;
- a new page is claimed by the conversation creating it until that one finishes: another
  that creates the same page waits for it, then gets the "already exists; add to it" answer a
  serial compile would give (when waiting would close a circle of conversations waiting on
  each other, it is told to link the page and come back to it instead);
- a finished conversation's pages are merged into the committed layer, never copied over it,
  so what two sources added to one page both land; lines both changed keep both versions.
The guards measure a conversation's edits against the committed page, as for one conversation.
"""

from __future__ import annotations

import logging
import posixpath
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from merge3 import Merge3

from .. import wiki_tree
from ..errors import PathEscape
from ..index_page import is_catalog
from ..memory_tool import ROOT, MemoryTool, content_header, numbered
from ..ownership import persons_page
from ..pages import (
    FrontMatterError,
    Page,
    content_hash,
    lost_line,
    parse_meta,
    slugify,
    split_front_matter,
)
from ..workspace import confine, read_owned

log = logging.getLogger("wikimem.anthropic")

WRITABLE_FOLDERS = ("sources", "concepts")
CODE_PAGES = ("index.md", "log.md", "lint.md")
USER_PAGES = ("AGENTS.md",)
MAX_PAGE_CHARS = 200_000  # a page bigger than this is a dump, not a wiki page
MAX_VIEW_LINES = 1500  # a longer file is shown in ranges (log.md grows without bound)
MAX_LISTING = 400
MIN_KEEP = 0.5  # an edit to a page others built may not shrink it below half
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass
class Staged:
    content: str | None  # None: deleted
    base: str | None  # hash of the file on disk when first staged; None when it did not exist
    # the committed text this pending edit was made on (a pending layer only): when another
    # conversation commits the page meanwhile, the edit is merged onto the new text from it
    origin: str | None = None


class Contended(Exception):
    """A page this conversation would create is being created by another conversation of the
    same compile (`holder`): the caller waits for that one to finish and runs the command again."""

    def __init__(self, rel: str, holder: str):
        super().__init__(f"{rel} is being created by the conversation for {holder}")
        self.rel = rel
        self.holder = holder


class Store:
    """What every conversation of one compile shares: the pages finished conversations
    committed (over the real wiki), the new pages live conversations are creating (claims),
    and the lock that serializes their access to both. The anthropic backend runs each
    conversation's local work (tool calls, checks, commit) under `cond`, and its requests
    to the model outside it."""

    def __init__(self, wiki: Path):
        self.wiki = wiki
        self.committed: dict[str, Staged] = {}
        self.claims: dict[str, str] = {}  # new page -> the conversation creating it
        self.overlays: dict[str, Overlay] = {}  # live conversations' overlays, by owner
        self.waiting: dict[str, str] = {}  # conversation -> the conversation it waits for
        self.cond = threading.Condition(threading.RLock())
        self.merged = 0  # commits merged onto pages other conversations changed meanwhile
        self.conflicts = 0  # regions both changed, kept in both versions

    def disk_text(self, rel: str) -> str | None:
        try:
            # a symlink in wiki/ is never read, nor a special file, nor a file with other hard
            # links (what the model is shown is sent to the API; search and listings go through here)
            confine(self.wiki, rel)
            return read_owned(self.wiki, self.wiki / rel, single_link=True).decode("utf-8", "replace")
        except (PathEscape, OSError):
            return None

    def committed_text(self, rel: str) -> str | None:
        """The page as finished conversations left it: this run's commits, else the disk."""
        if rel in self.committed:
            return self.committed[rel].content
        return self.disk_text(rel)

    def claimant(self, rel: str) -> str | None:
        return self.claims.get(rel)

    def claimed_text(self, rel: str) -> str | None:
        """A page a live conversation is creating, as it has it now (for search to name it)."""
        owner = self.claims.get(rel)
        overlay = self.overlays.get(owner) if owner is not None else None
        staged = overlay.pending.get(rel) if overlay is not None else None
        return staged.content if staged is not None else None

    def commit(self, overlay: Overlay) -> dict[str, Staged]:
        """Fold a conversation's pending pages into the committed layer, each merged onto what
        other conversations committed since it was staged; returns the pages as committed."""
        out: dict[str, Staged] = {}
        with self.cond:
            for rel, staged in overlay.pending.items():
                current = self.committed_text(rel)
                content = staged.content
                if current != staged.origin and content is not None and current is not None:
                    content, conflicts = merge_page(staged.origin or "", content, current)
                    self.merged += 1
                    self.conflicts += len(conflicts)
                    if conflicts:
                        log.info("%s: kept both versions of %d region(s) two sources changed", rel, len(conflicts))
                elif current != staged.origin and content is None and current is not None:
                    content = current  # deleted here, changed by another meanwhile: their text stays
                if rel in self.committed:
                    self.committed[rel].content = content
                else:
                    self.committed[rel] = Staged(content, staged.base)
                out[rel] = self.committed[rel]
            self.release(overlay.owner)
        return out

    def release(self, owner: str) -> None:
        """The conversation `owner` is done: its claims go, and whoever waited on them wakes."""
        with self.cond:
            for rel in [rel for rel, holder in self.claims.items() if holder == owner]:
                del self.claims[rel]
            self.overlays.pop(owner, None)
            self.cond.notify_all()

    def would_deadlock(self, me: str, holder: str) -> bool:
        """Whether `me` waiting for `holder` closes a circle of conversations waiting on each other."""
        seen = set()
        current: str | None = holder
        while current is not None and current not in seen:
            if current == me:
                return True
            seen.add(current)
            current = self.waiting.get(current)
        return False

    def wait_for(self, me: str, contended: Contended, stopped: Callable[[], bool] = lambda: False) -> None:
        """Block (in a conversation's own thread, holding `cond`) until the claim is released."""
        with self.cond:
            self.waiting[me] = contended.holder
            try:
                while self.claims.get(contended.rel) == contended.holder and not stopped():
                    self.cond.wait(0.5)
            finally:
                self.waiting.pop(me, None)


class Overlay:
    """One conversation's staged page writes (`pending`) over the shared Store (`committed`,
    what this run's finished conversations did, reading through to the real wiki)."""

    def __init__(self, wiki: Path, store: Store | None = None, owner: str = ""):
        self.wiki = wiki
        self.store = store if store is not None else Store(wiki)
        self.owner = owner
        self.pending: dict[str, Staged] = {}
        if owner:
            self.store.overlays[owner] = self

    @property
    def committed(self) -> dict[str, Staged]:
        return self.store.committed

    def disk_text(self, rel: str) -> str | None:
        return self.store.disk_text(rel)

    def committed_text(self, rel: str) -> str | None:
        """The page as it stands before this source: this run's earlier sources, else the disk."""
        return self.store.committed_text(rel)

    def read(self, rel: str) -> str | None:
        if rel in self.pending:
            return self.pending[rel].content
        return self.committed_text(rel)

    def refresh(self, rel: str) -> list[str]:
        """Bring this conversation's edit of `rel` onto the page as other conversations have
        committed it since: a three-way merge. Returns the regions both changed (kept twice)."""
        staged = self.pending.get(rel)
        if staged is None:
            return []
        current = self.committed_text(rel)
        if current == staged.origin:
            return []
        conflicts: list[str] = []
        if staged.content is not None and current is not None:
            staged.content, conflicts = merge_page(staged.origin or "", staged.content, current)
        elif current is not None:
            staged.content = current  # another conversation changed what this one deleted: theirs stays
        staged.origin = current
        return conflicts

    def exists(self, rel: str) -> bool:
        return self.read(rel) is not None

    def is_dir(self, rel: str) -> bool:
        if rel == "":
            return True
        if (self.wiki / rel).is_dir():
            return True
        prefix = rel.rstrip("/") + "/"
        return any(p.startswith(prefix) and s.content is not None for p, s in self._merged().items())

    def _merged(self) -> dict[str, Staged]:
        return {**self.committed, **self.pending}

    def write(self, rel: str, content: str | None) -> None:
        if rel in self.pending:
            self.pending[rel].content = content
        else:
            origin = self.committed_text(rel)
            base = self.committed[rel].base if rel in self.committed else hash_or_none(self.disk_text(rel))
            self.pending[rel] = Staged(content, base, origin)
        if content is not None and self.pending[rel].origin is None:
            self.store.claims.setdefault(rel, self.owner)

    def commit(self) -> dict[str, Staged]:
        committed = self.store.commit(self)
        self.pending = {}
        return committed

    def discard(self) -> None:
        self.pending = {}
        self.store.release(self.owner)

    def files(self, folder: str = "") -> Iterator[str]:
        """Every page under `folder` (wiki-relative), staged writes included, deletions excluded."""
        seen: set[str] = set()
        merged = self._merged()
        base = self.wiki / folder if folder else self.wiki
        # wiki_tree's walk: no hidden files or folders, no symlinks (a link is not a page)
        found = (rel for entry, rel in wiki_tree.walk(str(base), folder.strip("/"))
                 if not entry.name.startswith(".") and not entry.is_symlink())
        for rel in sorted(found, key=lambda rel: rel.split("/")):
            seen.add(rel)
            if rel in merged and merged[rel].content is None:
                continue
            yield rel
        prefix = f"{folder.rstrip('/')}/" if folder else ""
        for rel in sorted(merged):
            if rel not in seen and rel.startswith(prefix) and merged[rel].content is not None:
                yield rel


# --- merging what two conversations did to one page


def merge_page(base: str, mine: str, theirs: str) -> tuple[str, list[str]]:
    """`mine` (an edit of `base`) carried onto `theirs` (another edit of `base`): the three-way
    merge of version control, by lines. Lines both sides inserted at one place are kept, theirs
    first; a region both changed is kept in both versions (theirs, then the lines of mine it
    lacks), so no side's addition is lost, and is returned (mine's text) for the model to tidy.

    The front matter is merged by field, since two sources that extend a page both add to its
    `sources` and `aliases` lists: a list takes the items of both, another field the value that
    changed (theirs when both did)."""
    if theirs == base:
        return mine, []
    if mine == base or mine == theirs:
        return theirs, []
    fms = [split_front_matter(text) for text in (base, mine, theirs)]
    if all(fm is not None for fm, _, _ in fms) and len({fm for fm, _, _ in fms}) > 1:
        try:
            metas = [parse_meta(fm or "") for fm, _, _ in fms]
        except FrontMatterError:
            metas = []
        if metas:
            body, conflicts = _merge_lines(fms[0][1], fms[1][1], fms[2][1])
            meta = _merge_meta(*metas)
            if meta == metas[2]:
                head = theirs[: len(theirs) - len(fms[2][1])]
            elif meta == metas[1]:
                head = mine[: len(mine) - len(fms[1][1])]
            else:
                head = Page("x.md", meta, "").dumps().rstrip("\n") + "\n"
            return head + body, conflicts
    return _merge_lines(base, mine, theirs)


def _merge_meta(base: dict[str, object], mine: dict[str, object], theirs: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key in [*theirs, *(k for k in mine if k not in theirs)]:
        b, m, t = base.get(key), mine.get(key), theirs.get(key)
        if key not in mine and key in base:
            if t == b:
                continue  # mine removed it
            out[key] = t
        elif key not in theirs:
            if key in base and m == b:
                continue  # theirs removed it
            out[key] = m
        elif m == b or m == t:
            out[key] = t
        elif t == b:
            out[key] = m
        elif isinstance(m, list) and isinstance(t, list):
            out[key] = [*t, *(item for item in m if item not in t)]
        else:
            out[key] = t
    return out


def _merge_lines(base: str, mine: str, theirs: str) -> tuple[str, list[str]]:
    merge = Merge3(base.splitlines(True), mine.splitlines(True), theirs.splitlines(True))
    out: list[str] = []
    conflicts: list[str] = []
    for group in merge.merge_groups():
        if group[0] != "conflict":
            out.extend(_ended(group[1]))
            continue
        was, ours, other = group[1], group[2], group[3]
        if was:  # both changed these lines: keep theirs, and what ours adds
            conflicts.append("".join(ours).strip())
        out.extend(_ended(other))
        out.extend(_ended([line for line in ours if line not in other]))
    text = "".join(out)
    if not (mine.endswith("\n") or theirs.endswith("\n")):
        text = text.removesuffix("\n")
    return text, conflicts


def _ended(lines: Sequence[str]) -> list[str]:
    """Lines that each end a line, so two regions joined never run into one line."""
    return [line if line.endswith("\n") else line + "\n" for line in lines]


def hash_or_none(text: str | None) -> str | None:
    return None if text is None else content_hash(text)


class StagedMemoryTool(MemoryTool):
    """The memory tool the anthropic backend gives the model while it compiles: rooted at wiki/,
    staging every write in an Overlay behind wikimem's guards. (Agents get memory_tool.WikiMemoryTool.)"""

    def __init__(self, wiki: Path, overlay: Overlay, recorded: Mapping[str, str], *, cache_control: None = None,
                 human: dict[str, bool] | None = None, frozen: set[str] | None = None):
        super().__init__(cache_control=cache_control)
        self.wiki = wiki
        self.overlay = overlay
        self.recorded = recorded  # wiki-relative path -> hash wikimem last wrote (state.db pages)
        self._human: dict[str, bool] = {} if human is None else human  # shared by a compile's conversations
        self.source_path = ""
        self.own_page = ""
        self.created: set[str] = set()  # pages this source created (may be rewritten, renamed, deleted)
        self.deletable: set[str] = set()  # existing pages this session may delete (see begin)
        # pages going away with their removed sources: view only
        self.frozen: set[str] = set() if frozen is None else frozen
        self.refusals: list[str] = []
        # each page as this conversation last saw it (a view, its own edits): line numbers it
        # gives refer to that text, which other conversations may have changed since
        self.seen: dict[str, str] = {}

    # --- per source
    def begin(self, source_path: str, own_page: str, *, deletable: set[str] | frozenset[str] = frozenset()) -> None:
        """Start a session: compiling `source_path` into `own_page`, or (own_page "") cleaning up
        after a removed source, when `deletable` names the concept pages that drew only on it."""
        self.source_path = source_path
        self.own_page = own_page
        self.created = set()
        self.deletable = set(deletable)
        self.refusals = []
        self.seen = {}

    def is_human(self, rel: str) -> bool:
        """A page on disk that a person wrote: the compiler's test (ownership.persons_page)."""
        if rel not in self._human:
            path = self.wiki / rel
            if not path.is_file():
                self._human[rel] = False
            else:
                recorded = self.recorded.get(rel)
                self._human[rel] = persons_page(path.read_bytes(), (recorded, "", None) if recorded else None)
        return self._human[rel]

    # --- paths
    def to_rel(self, path: object) -> str:
        if not isinstance(path, str) or not path.strip():
            raise self._refuse(f"a path is required, such as {ROOT}/concepts/<name>.md")
        text = path.strip()
        if text != ROOT and not text.startswith(ROOT + "/"):
            raise self._refuse(f"{path!r} is outside the wiki: paths start with {ROOT}/ (the wiki's folder)")
        rel = text[len(ROOT) :].strip("/")
        parts = rel.split("/") if rel else []
        if "\\" in rel or "\x00" in rel or ".." in parts:
            raise self._refuse(f"{path!r}: '..' and backslashes are not allowed; stay inside {ROOT}/")
        rel = "/".join(p for p in parts if p not in ("", "."))
        if rel:
            try:
                confine(self.wiki, rel)
            except PathEscape as exc:
                raise self._refuse(f"{path!r} leads outside the wiki ({exc}); refused") from None
        # every command runs on the page as it is now: this conversation's edits of it carried
        # onto what other conversations of the compile committed since
        for region in self.overlay.refresh(rel):
            shown = region if len(region) <= 80 else region[:79] + "…"
            self.notes.append(
                f"Note: another source compiled at the same time changed {self.show(rel)} where you had "
                f"edited it; both versions of that part are in the page now (yours: {shown!r}). View it and "
                "merge them into one with str_replace."
            )
        return rel

    def _refuse(self, message: str) -> ToolError:
        self.refusals.append(message)
        log.info("memory tool refused: %s", message)
        return ToolError(f"Refused: {message}")

    def _check_writable(self, rel: str) -> None:
        shown = self.show(rel)
        if rel == "":
            raise self._refuse(f"{ROOT} itself cannot be changed")
        name = posixpath.basename(rel)
        if rel in CODE_PAGES or is_catalog(rel) or rel.startswith("facts/"):
            raise self._refuse(f"{shown} is written by wikimem's code (index and log are regenerated after you finish); view it, do not edit it")
        if rel in USER_PAGES:
            raise self._refuse(f"{shown} belongs to the user; you may view it, not edit it")
        folder = rel.split("/", 1)[0]
        if folder not in WRITABLE_FOLDERS or rel.count("/") != 1 or not name.endswith(".md"):
            raise self._refuse(
                f"{shown}: pages are written only as {ROOT}/sources/<name>.md (this source's page) "
                f"or {ROOT}/concepts/<name>.md; everything else is view only"
            )
        if rel in self.frozen:
            raise self._refuse(
                f"{shown} is being removed with its source; edit the pages that link it instead"
            )
        path = self.wiki / rel
        if path.is_symlink() or (self.wiki / folder).is_symlink():
            raise self._refuse(f"{shown} is a symbolic link; links are view only")

    def _check_new_name(self, rel: str) -> None:
        stem = posixpath.splitext(posixpath.basename(rel))[0]
        if not _SLUG.fullmatch(stem):
            folder = posixpath.dirname(rel)
            raise self._refuse(
                f"page names are lowercase words joined by hyphens; use {ROOT}/{folder}/{slugify(stem)}.md"
            )
        if rel.startswith("sources/") and rel != self.own_page:
            raise self._refuse(
                f"source pages belong to their own sources; this source's page is {self.show(self.own_page)}"
            )

    def _check_unclaimed(self, rel: str) -> None:
        """A new page another live conversation is creating: wait for it (Contended)."""
        holder = self.overlay.store.claimant(rel)
        if holder is not None and holder != self.overlay.owner:
            raise Contended(rel, holder)

    def _check_keeps(self, rel: str, new: str, current: str | None = None) -> None:
        """Edits to a page other sources built keep most of it and leave its front matter readable;
        on a page a person edited, every line already there stays (the edit may only add)."""
        if rel in self.created or (rel == self.own_page and not self.is_human(rel)):
            return
        if current is not None and self.is_human(rel):
            # wikimem cannot tell the person's words from its own on such a page, so none of its
            # lines may go or change: whatever a source says, their notes stay as they wrote them
            lost = lost_line(current, new)
            if lost is not None:
                line = current.split("\n")[lost - 1].strip()
                shown = line if len(line) <= 60 else line[:59] + "…"
                raise self._refuse(
                    f"a person edited {self.show(rel)} since wikimem wrote it, and this edit would change or "
                    f"remove their text (line {lost}: {shown!r}); on such a page only add: insert new lines, "
                    "or str_replace with a new_str that keeps old_str's lines whole"
                )
        before = self.overlay.committed_text(rel)
        if before is None:
            return
        # tidying after a removed source may take out most of a page (there is no source text, so
        # no document to talk the model into it); compiling a source may not
        keep = MIN_KEEP if self.own_page else 0.2
        if len(new) < keep * len(before):
            raise self._refuse(
                f"this edit would remove more than half of {self.show(rel)}, which other sources built; "
                "make smaller edits that add to it"
            )
        had_front_matter = split_front_matter(before)[0] is not None
        try:
            fm = split_front_matter(new)[0]
            if had_front_matter and (fm is None or not str(parse_meta(fm).get("title") or "").strip()):
                raise FrontMatterError("the front matter or its title would be gone")
        except FrontMatterError as exc:
            raise self._refuse(f"this edit would break the front matter of {self.show(rel)} ({exc})") from None

    def _text(self, rel: str, shown: str) -> str:
        text = self.overlay.read(rel)
        if text is None:
            if self.overlay.is_dir(rel):
                raise ToolError(f"The path {shown} is a directory, not a file.")
            # a page another conversation is creating: wait for it, then see it as that one left it
            self._check_unclaimed(rel)
            raise ToolError(f"The path {shown} does not exist. Please provide a valid path.")
        return text

    # --- commands
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        rel = self.to_rel(command.path)
        shown = self.show(rel)
        if self.overlay.is_dir(rel) and self.overlay.read(rel) is None:
            return self._listing(rel, shown)
        text = self._text(rel, shown)
        lines = text.split("\n")
        start = 1
        view_range = getattr(command, "view_range", None)
        if view_range and len(view_range) == 2:
            first = max(1, int(view_range[0]))
            last = len(lines) if int(view_range[1]) == -1 else int(view_range[1])
            lines = lines[first - 1 : last]
            start = first
        self.seen[rel] = text
        note = ""
        if len(lines) > MAX_VIEW_LINES:
            note = (
                f"\n[{len(lines) - MAX_VIEW_LINES} more lines; view them with view_range "
                f"[{start + MAX_VIEW_LINES}, -1]]"
            )
            lines = lines[:MAX_VIEW_LINES]
        return f"{content_header(shown)}{numbered(lines, start)}{note}"

    def _listing(self, rel: str, shown: str) -> str:
        entries: set[str] = set()
        for file in self.overlay.files(rel):
            inner = file[len(rel) + 1 :] if rel else file
            parts = inner.split("/")
            for depth in range(1, min(len(parts), 2)):
                entries.add("/".join(parts[:depth]) + "/")
            if len(parts) <= 2:
                entries.add(inner)
        ordered = sorted(entries)
        more = len(ordered) - MAX_LISTING
        lines = [f"{shown}/{e}" if rel else f"{ROOT}/{e}" for e in ordered[:MAX_LISTING]]
        header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
        tail = f"\n[{more} more entries; use search_wiki or view a subfolder]" if more > 0 else ""
        return f"{header}\n{shown}\n" + "\n".join(lines) + tail

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        rel = self.to_rel(command.path)
        shown = self.show(rel)
        self._check_writable(rel)
        text = getattr(command, "file_text", None)
        if not isinstance(text, str):
            raise ToolError("create needs `file_text`, the whole content of the page")
        if len(text) > MAX_PAGE_CHARS:
            raise self._refuse(f"{shown} would be {len(text)} characters; keep a page under {MAX_PAGE_CHARS}")
        exists = self.overlay.exists(rel)
        if not exists:
            self._check_new_name(rel)
            self._check_unclaimed(rel)
        if exists:
            if self.is_human(rel):
                raise self._refuse(
                    f"a person edited {shown} since wikimem last wrote it: you may view it and make small "
                    "edits with str_replace or insert, but not overwrite it"
                )
            if rel not in self.created and rel != self.own_page:
                committed = self.overlay.committed.get(rel)
                if rel not in self.overlay.pending and committed is not None and committed.base is None:
                    # shown as a view shows it: the model adds to it next, without a turn to view it
                    now = self.overlay.read(rel) or ""
                    self.seen[rel] = now
                    lines = now.split("\n")[:MAX_VIEW_LINES]
                    raise ToolError(
                        f"{shown} already exists: another source compiled at the same time created it while you "
                        "worked. Add what this source says with str_replace or insert. Here's the content of "
                        f"{shown} with line numbers:\n{numbered(lines, 1)}"
                    )
                raise self._refuse(
                    f"{shown} already exists; add to it with str_replace or insert (create makes new pages "
                    "and may rewrite only this source's own page)"
                )
        else:
            self.created.add(rel)
        self.overlay.write(rel, text)
        self.seen[rel] = text
        return f"File {'overwritten' if exists else 'created'} successfully at: {shown}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        rel = self.to_rel(command.path)
        shown = self.show(rel)
        self._check_writable(rel)
        content = self._text(rel, shown)
        old, new = getattr(command, "old_str", None), getattr(command, "new_str", None)
        if not isinstance(old, str) or not old:
            raise ToolError("str_replace needs a non-empty `old_str` that appears once in the file")
        new = new if isinstance(new, str) else ""
        count = content.count(old)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear verbatim in {shown}.")
        if count > 1:
            lines, start = [], 0
            while (pos := content.find(old, start)) != -1:
                lines.append(content[:pos].count("\n") + 1)
                start = pos + 1
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
                f"{', '.join(map(str, lines))}. Please ensure it is unique"
            )
        pos = content.find(old)
        updated = content.replace(old, new, 1)
        self._check_keeps(rel, updated, content)
        self.overlay.write(rel, updated)
        self.seen[rel] = updated  # the snippet below numbers its lines as they are now
        line = content[:pos].count("\n")
        new_lines = updated.split("\n")
        first = max(0, line - 2)
        snippet = numbered(new_lines[first : min(len(new_lines), line + 3 + new.count("\n"))], first + 1)
        return f"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}"

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        rel = self.to_rel(command.path)
        shown = self.show(rel)
        self._check_writable(rel)
        content = self._text(rel, shown)
        # the line number refers to the page as this conversation last saw it; when other
        # conversations changed it since, the insertion is carried onto the page as it is now
        # by a three-way merge, so it lands among the same lines the model chose
        seen = self.seen.get(rel, content)
        lines = seen.split("\n")
        if seen.endswith("\n"):
            lines.pop()
        at = getattr(command, "insert_line", None)
        if not isinstance(at, int) or at < 0 or at > len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {at}. It should be within the range [0, {len(lines)}].")
        insert_text = getattr(command, "insert_text", None)
        if not isinstance(insert_text, str):
            raise ToolError("insert needs `insert_text`")
        lines.insert(at, insert_text.rstrip("\n"))
        inserted = "\n".join(lines) + "\n"
        updated = inserted if seen == content else merge_page(seen, inserted, content)[0]
        self._check_keeps(rel, updated, content)
        self.overlay.write(rel, updated)
        self.seen[rel] = inserted
        return f"The file {shown} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        rel = self.to_rel(command.path)
        shown = self.show(rel)
        self._check_writable(rel)
        if not self.overlay.exists(rel):
            raise ToolError(f"The path {shown} does not exist")
        if rel not in self.created and rel not in self.deletable:
            raise self._refuse(
                f"{shown} existed before this source; only pages created while compiling this source can be "
                "deleted (wikimem removes a source's page itself when the source goes away)"
            )
        self.overlay.write(rel, None)
        self.created.discard(rel)
        self.deletable.discard(rel)
        return f"Successfully deleted {shown}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old = self.to_rel(command.old_path)
        new = self.to_rel(command.new_path)
        self._check_writable(old)
        self._check_writable(new)
        if not self.overlay.exists(old):
            raise ToolError(f"The path {self.show(old)} does not exist")
        if old not in self.created:
            raise self._refuse(
                f"{self.show(old)} existed before this source; only pages created while compiling this source "
                "can be renamed (give the other name in its `aliases` instead)"
            )
        if self.overlay.exists(new):
            raise ToolError(f"The destination {self.show(new)} already exists")
        self._check_new_name(new)
        self._check_unclaimed(new)
        text = self.overlay.read(old)
        self.overlay.write(new, text)
        self.overlay.write(old, None)
        self.created.discard(old)
        self.created.add(new)
        return f"Successfully renamed {self.show(old)} to {self.show(new)}"

    def clear_all_memory(self) -> str:
        raise self._refuse("the wiki cannot be cleared")
