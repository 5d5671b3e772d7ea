"""Superseded and contradicted claims, read from the raw sources.

A claim is a sentence that states a versioned value for a fact:

    "Go 1.21 requires macOS 10.15 Catalina or later"   -> (min, macos, -)       = 10.15
    "The server-side default is unchanged at TLS 1.0"   -> (default, tls, server) = 1.0
    "We intend for Go 1.19 to require Go 1.17 or later for bootstrap"
                                                        -> (min, go, bootstrap) = 1.17, plan for Go 1.19

Precision over recall: a claim needs a trigger (requires, at least, or later,
defaults to, is now, unchanged at) right before the value; sentences about the
past ("previous versions looked for ...") or negated ones are dropped; a value
naming the document's own product ("requires Go 1.21") counts only with a role
word (bootstrap, server, client), since "requires Go 1.21" alone is about
whatever feature the sentence describes. Each fact yields at most one finding
(current value against the last different one), so a value that changed in ten
releases is one finding, not forty-five.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from ..analysis import STOPWORDS
from .context import Context
from .corpus import SourceText, cache
from .model import Finding

# a versioned name: "macOS 10.15", "Windows Server 2016", "TLS 1.2", "OS X 10.10", "Linux kernel 2.6.32"
# a capitalized name ("Node.js", "C++", "macOS"); dots inside a name, never at its end
_WORD_NAME = r"(?:[A-Z](?:[\w+.]*[\w+])?|[a-z]+[A-Z](?:[\w+.]*[\w+])?)"
_NAME = rf"{_WORD_NAME}(?:[ ](?:{_WORD_NAME}|kernel)){{0,2}}"
VERSIONED = re.compile(rf"\b(?P<name>{_NAME})\s+(?:version\s+)?v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)")
# lowercase names ("glibc 2.17", "npm 9.1") count only right after a requirement word, with a dotted version
LOWER_AFTER_TRIGGER = re.compile(
    r"\b(?:requires?|required|requiring|at\s+least)\s+(?:the\s+|a\s+)?(?P<name>[a-z][\w+.-]*[\w+])\s+(?:version\s+)?v?(?P<ver>\d+\.\d+(?:\.\d+)*)(?![\w.]*\w)"
)
_MIN_TRIGGER = re.compile(r"\b(?:requires?|requiring|required(?!\s+by)|at\s+least|minimum(?:\s+\w+){0,3}\s+(?:is|of))\b", re.I)
_DEFAULT_TRIGGER = re.compile(r"\b(?:defaults?\s+to|default\s+(?:is|of)|is\s+now|now\s+is|unchanged\s+at|will\s+be)\b", re.I)
_OR_LATER = re.compile(r"^\s*(?:[\w-]+\s+){0,2}(?:or|and)\s+(?:later|newer|higher|above)\b|^[\w-]*\+", re.I)
# "or later" alone is no requirement ("runs on FreeBSD 12.0 or later" describes one port); one of these must come first
_SUPPORT_WORDS = re.compile(r"\b(?:requir\w*|minimum|at\s+least|only\s+(?:supports?|runs?))\b", re.I)
_PLAN = re.compile(r"\b(?:will|intend(?:s|ed)?|plan(?:s|ned)?|expect(?:s|ed)?|anticipat\w*|going\s+to|future|propos\w+)\b", re.I)
_PAST = re.compile(r"\b(?:previous(?:ly)?|prior\s+(?:to|versions?)|formerly|used\s+to|earlier\s+versions?|older\s+versions?)\b", re.I)
_NEGATION = re.compile(r"\b(?:no\s+longer|not|n't|never|without)\b", re.I)
_ROLES = {"server": "server", "servers": "server", "server-side": "server", "client": "client", "clients": "client",
          "client-side": "client", "bootstrap": "bootstrap", "bootstrapping": "bootstrap"}
_ROLE_WORD = re.compile(r"\b(?:server-side|client-side|servers?|clients?|bootstrap(?:ping)?)\b", re.I)
# names that are sentence furniture, not products
_NOT_NAMES = frozenset("""as in since before after until from with the of and or to for by on at if when this that these
those it its version versions release releases issue issues section chapter figure table page step phase
cl go1 part level rfc pep iso fips ecma ieee""".split())
# words before "requires" that mean "the product itself": anything else names what requires the value
_SCOPE_SKIP = frozenset("""now also still only will to does do did that which so and then currently thus therefore
it we this release releases version versions support for on of the a an is be being further additionally last
intend intends plan expect require requires required requiring""".split())
# a claim needs one of these words; most sentences have none, and skip the regexes
_HINT = re.compile(r"requir|least|minimum|default|later|newer|higher|above|\+|only support|only run", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_ALIASES = {"os x": "macos", "mac os x": "macos", "osx": "macos", "apple os x": "macos", "mac os": "macos"}


class _Mention:
    """A lowercase-name match seen through the same interface as a VERSIONED match."""

    def __init__(self, match: re.Match[str]):
        self.match = match

    def start(self, group: int | str = 0) -> int:
        return self.match.start("name") if group == 0 else self.match.start(group)

    def end(self, group: int | str = 0) -> int:
        return self.match.end() if group == 0 else self.match.end(group)

    def group(self, name: int | str = 0) -> str:
        if name == 0:
            return self.match.string[self.start() : self.end()]
        return self.match.group(name)


@dataclass(frozen=True)
class Claim:
    key: tuple[str, str, str]  # (relation, entity, role)
    value: tuple[int, ...]
    value_text: str  # "macOS 10.15 Catalina" as written (name and number)
    plan: bool
    subject: tuple[int, ...] | None  # the release the claim is about ("Go 1.19" in a plan)
    source: str  # raw path
    sentence: str
    line: int


def _entity(name: str) -> str | None:
    words = name.split()
    # "As Windows" -> "Windows": leading furniture words are not part of the name
    while words and words[0].lower() in _NOT_NAMES:
        words = words[1:]
    if not words:
        return None
    key = " ".join(words).lower()
    return _ALIASES.get(key, key)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def compatible(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """1.17 and 1.17.13 agree (one refines the other); 10 and 10.0 agree; 1.17 and 1.20 do not."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _role(sentence: str, at: int, spans: list[tuple[int, int]]) -> str:
    best: tuple[int, str] | None = None
    for m in _ROLE_WORD.finditer(sentence):
        if any(a <= m.start() < b for a, b in spans):
            continue  # "Windows Server 2016" names a product; it is no server-side role
        distance = abs(m.start() - at)
        if best is None or distance < best[0]:
            best = (distance, _ROLES[m.group(0).lower()])
    return best[1] if best else ""


def _scope(lead: str, product: str | None) -> str:
    """What requires the value, when it is not the product: "ELFv2 support requires ..." -> "elfv2"."""
    clause = re.split(r"[,;:()]", lead)[-1].lower()
    words = re.findall(r"[\w./+-]+", clause)[-4:]
    if product and product in words or any(w in ("it", "we", "this") for w in words):
        return ""
    kept = [w for w in words if w not in _SCOPE_SKIP and not re.fullmatch(r"[\d.]+", w)][-2:]
    return " ".join(kept)


def extract(doc: SourceText) -> list[Claim]:
    product = doc.version[0] if doc.version else None
    own = doc.version[1] if doc.version else None
    out: list[Claim] = []
    for sentence, line in doc.sentences:
        if len(sentence) > 600 or not _DIGIT.search(sentence) or not _HINT.search(sentence):
            continue
        mentions: list[re.Match[str] | _Mention] = list(VERSIONED.finditer(sentence))
        taken = {(m.start(), m.end()) for m in mentions}
        for low in LOWER_AFTER_TRIGGER.finditer(sentence):
            name = low.group("name")
            if name not in STOPWORDS and name not in _NOT_NAMES and (low.start("name"), low.end()) not in taken:
                mentions.append(_Mention(low))
        mentions.sort(key=lambda m: m.start())
        if not mentions:
            continue
        spans = [(m.start(), m.end()) for m in mentions]
        has_default = "default" in sentence.lower()
        values: list[tuple[int, int]] = []  # spans already taken as a claim's value
        for m in mentions:
            entity = _entity(m.group("name"))
            if not entity:
                continue
            window = max(0, m.start() - 60)
            before = sentence[window : m.start()]
            after = sentence[m.end() : m.end() + 40]
            relation = None
            trigger_at = None
            last = None
            for t in _MIN_TRIGGER.finditer(sentence, 0, m.start()):
                last = t
            if last and m.start() - last.end() <= 35 and not VERSIONED.search(sentence, last.end(), m.start()):
                relation, trigger_at = "min", last.start()
            elif _OR_LATER.match(after) and (support := _last(_SUPPORT_WORDS, sentence, m.start())) is not None:
                relation, trigger_at = "min", support.start()
            if has_default:
                d = None
                for t in _DEFAULT_TRIGGER.finditer(before):
                    d = t
                if d and not VERSIONED.search(before[d.end():]) and len(before) - d.end() <= 25:
                    relation, trigger_at = "default", window + d.start()
            if relation is None or trigger_at is None:
                continue
            lead = sentence[:trigger_at]
            if _PAST.search(lead) or _NEGATION.search(sentence[max(0, trigger_at - 25) : m.start()]):
                continue
            role = _role(sentence, m.start(), spans)
            if relation == "min":
                scope = _scope(lead, product)
                if not scope and not product:
                    # "It requires Python 3.8" in a note with no release in its title: "it" is whatever
                    # the note is about, so the note's title stands in (two projects' notes never meet)
                    scope = "on " + " ".join(re.findall(r"[a-z0-9+#]+", doc.title.lower())[:4])
                if scope:
                    role = f"{role}, {scope}" if role else scope
            if product and entity == product and not role:
                continue  # "requires Go 1.21" alone: which feature needs it is not a fact key
            plan = bool(_PLAN.search(sentence, 0, m.start()))
            subject = None
            if product:
                for s in VERSIONED.finditer(lead):
                    if _entity(s.group("name")) == product and (s.start(), s.end()) not in values:
                        subject = _version(s.group("ver"))
            if subject is None and not plan:
                subject = own
            values.append((m.start(), m.end()))
            value_text = sentence[m.start() : m.end() + len(_trailing_name(after))].strip()
            out.append(Claim((relation, entity, role), _version(m.group("ver")), value_text, plan, subject,
                             doc.path, sentence, line))
    return out


def _last(pattern: re.Pattern[str], text: str, end: int) -> re.Match[str] | None:
    found = None
    for found in pattern.finditer(text, 0, end):  # noqa: B007 - the last match is the one wanted
        pass
    return found


def _trailing_name(after: str) -> str:
    """ "Catalina or later" -> "Catalina": the release name that follows a number reads better quoted."""
    m = re.match(r"(\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?=\s|[;,.]|$)", after)
    return m.group(1) if m and m.group(1).strip().lower() not in {"or", "and"} else ""


# --- ordering ---------------------------------------------------------------------------------


FILE_TIME_GAP_NS = 3600 * 10**9  # an hour


class Order:
    """Which of two sources is newer: the date it carries, else release order, else file time."""

    def __init__(self, docs: list[SourceText]):
        self.docs = {d.path: d for d in docs}
        # a release notes page without a date borrows the date of its dated sibling for the same
        # release (the announcement of "Go 1.22" dates "Go 1.22 Release Notes")
        dated: dict[tuple[str, tuple[int, ...]], str] = {}
        for d in docs:
            if d.date and d.version:
                dated.setdefault(d.version, d.date)
                dated[d.version] = min(dated[d.version], d.date)
        self.date = {d.path: d.date or (dated.get(d.version) if d.version else None) for d in docs}
        self.how: dict[tuple[str, str], str] = {}

    def compare(self, a: str, b: str) -> tuple[int, str]:
        """(-1 | 0 | 1, basis): a older, same, newer than b."""
        da, db = self.date.get(a), self.date.get(b)
        if da and db and da != db:
            return (-1 if da < db else 1), "date"
        va, vb = self.docs[a].version, self.docs[b].version
        if va and vb and va[0] == vb[0] and va[1] != vb[1]:
            return (-1 if va[1] < vb[1] else 1), "release order"
        if da and db:
            return 0, "same date"
        if not (da or db or va or vb):
            ma, mb = self.docs[a].mtime_ns, self.docs[b].mtime_ns
            # files copied or checked out together get times seconds apart that say nothing
            # about which was written later: only a clear gap orders them
            if abs(ma - mb) > FILE_TIME_GAP_NS:
                return (-1 if ma < mb else 1), "file time"
        return 0, "undated"

    def bucket(self, path: str) -> object:
        """Sources that compare as "same time" share a bucket (a superset; compare() decides)."""
        d = self.docs[path]
        if self.date.get(path):
            return ("date", self.date[path])
        if d.version:
            return ("version", d.version)
        return ("undated",)

    def label(self, path: str) -> str:
        d = self.docs[path]
        if self.date.get(path):
            return str(self.date[path])
        if d.version:
            return f"{d.version[0]} {'.'.join(map(str, d.version[1]))}"
        return "undated"


# --- rules -------------------------------------------------------------------------------------


def _claims(ctx: Context) -> tuple[list[Claim], Order]:
    found = ctx._cache.get("claims")
    if found is not None:
        return found  # type: ignore[no-any-return]
    sources = cache(ctx)
    docs = [d for p in sorted(ctx.raw_files) if (d := sources.get(p)) is not None and not d.skipped]
    claims = [c for d in docs for c in d.claims]
    result = (claims, Order(docs))
    ctx._cache["claims"] = result
    return result


def _pages_for(ctx: Context, raw: str) -> list[str]:
    index = ctx._cache.get("pages_by_source")
    if index is None:
        index = defaultdict(list)
        for page in ctx.pages.values():
            if page.kind == "source":
                for s in page.page.sources if page.page else []:
                    index[s].append(page.wpath)
        ctx._cache["pages_by_source"] = index
    return list(index.get(raw, []))


def _fmt(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


def _key_label(key: tuple[str, str, str], sample: Claim) -> str:
    relation, _entity_key, role = key
    size = len(_entity_key.split())
    name = " ".join(sample.value_text.split()[:size]) if sample.value_text else _entity_key
    if _entity_key == "macos":
        name = "macOS"
    what = {"min": "minimum", "default": "default"}[relation]
    return f"{what} {name} version" + (f" ({role})" if role else "")


def _newest(group: list[Claim], order: Order) -> Claim:
    newest = group[0]
    for c in group[1:]:
        cmp, _ = order.compare(c.source, newest.source)
        if cmp > 0 or (cmp == 0 and c.source == newest.source and c.value > newest.value):
            newest = c
    return newest


def superseded(ctx: Context) -> Iterator[Finding]:
    claims, order = _claims(ctx)
    by_key: dict[tuple[str, str, str], list[Claim]] = defaultdict(list)
    for c in claims:
        if not c.plan:
            by_key[c.key].append(c)
    yield from _stale_answers(ctx, by_key, order)
    for key, group in sorted(by_key.items()):
        paths = {c.source for c in group}
        if len(paths) < 2:
            continue
        newest = _newest(group, order)
        # the most recent older claim that gives another value
        previous: Claim | None = None
        others: set[tuple[int, ...]] = set()
        basis = ""
        for c in group:
            if c.source == newest.source or compatible(c.value, newest.value):
                continue
            cmp, how = order.compare(c.source, newest.source)
            if cmp >= 0:
                continue
            others.add(c.value)
            if previous is None or order.compare(c.source, previous.source)[0] > 0:
                previous, basis = c, how
        if previous is None:
            continue
        label = _key_label(key, newest)
        older = sorted(others - {previous.value})
        message = (
            f"{label}: {previous.source} ({order.label(previous.source)}) says {previous.value_text}; "
            f"{newest.source} ({order.label(newest.source)}) says {newest.value_text}, which is current "
            f"(newer by {basis})"
            + (f"; older values too: {', '.join(_fmt(v) for v in older)}" if older else "")
        )
        yield Finding.make(
            "superseded", "warning", message,
            paths=[previous.source, newest.source, *_pages_for(ctx, previous.source)],
            lines=[previous.line, newest.line],
            evidence={
                "fact": label,
                "old": {"path": previous.source, "sentence": previous.sentence, "value": _fmt(previous.value)},
                "current": {"path": newest.source, "sentence": newest.sentence, "value": _fmt(newest.value)},
                "basis": basis,
            },
        )


_QUOTE_LINE = re.compile(r"^[ \t]*[-*][ \t]+[\"“].*$|^[ \t]*>.*$", re.MULTILINE)


def _stale_answers(ctx: Context, by_key: dict[tuple[str, str, str], list[Claim]], order: Order) -> Iterator[Finding]:
    """An answer page (filed by `query --save` or written by a person) that states a value the
    sources have since replaced. Quotes (`- "..."`, `> ...`) are the sources' words, not the
    page's claim, and are left out; so are plans and past tense, as in sources."""
    from ..sources import load_markdown
    from .corpus import SourceText

    products = Counter(d.version[0] for d in order.docs.values() if d.version)
    product = products.most_common(1)[0][0] if products else None
    for page in ctx.pages.values():
        if page.kind != "answer" or page.page is None or page.is_generated:
            continue
        body = _QUOTE_LINE.sub("", page.body)
        if not _DIGIT.search(body) or not _HINT.search(body):
            continue
        doc = load_markdown(page.wpath, body)
        from ..analysis import split_sentences

        # an answer is about the sources' product ("Widget requires ...") without naming a release
        text = SourceText(page.wpath, "", version=(product, ()) if product else None,
                          sentences=[(s.text, s.line) for s in split_sentences(doc) if s.kind != "heading"])
        written = str(page.meta.get("updated") or page.meta.get("date") or "")[:10]
        for claim in extract(text):
            group = by_key.get(claim.key)
            if claim.plan or not group:
                continue
            current = _newest(group, order)
            if compatible(claim.value, current.value):
                continue
            current_date = order.date.get(current.source)
            if written and current_date and written >= current_date:
                continue  # the page was written after the newest source: it may know better
            label = _key_label(claim.key, current)
            line = page.body_offset + claim.line
            yield Finding.make(
                "superseded", "warning",
                f"{label}: {page.wpath} says {claim.value_text}; {current.source} ({order.label(current.source)}) "
                f"says {current.value_text}, which is current",
                paths=[page.wpath, current.source], lines=[line, current.line],
                evidence={
                    "fact": label,
                    "old": {"path": page.wpath, "sentence": claim.sentence, "value": _fmt(claim.value)},
                    "current": {"path": current.source, "sentence": current.sentence, "value": _fmt(current.value)},
                    "basis": "answer page",
                },
            )


def contradicted(ctx: Context) -> Iterator[Finding]:
    claims, order = _claims(ctx)
    by_key: dict[tuple[str, str, str], list[Claim]] = defaultdict(list)
    for c in claims:
        by_key[c.key].append(c)
    for key, group in sorted(by_key.items()):
        actual = [c for c in group if not c.plan]
        label = _key_label(key, group[0])
        # 1. a plan against the outcome: "Go 1.19 will require X" but a later source says Go 1.20 did
        plans: dict[tuple[str, int, tuple[int, ...]], list[Claim]] = defaultdict(list)
        for c in group:
            if c.plan and c.subject is not None:
                plans[(c.source, c.line, c.subject)].append(c)
        reported: set[tuple[str, tuple[int, ...]]] = set()
        for (source, _line, subject_v), alternatives in sorted(plans.items()):
            # "will require FreeBSD 11.2+ or FreeBSD 12.0+": the plan holds if any alternative came true
            plan = alternatives[0]
            if (source, subject_v) in reported:
                continue
            if any(c.subject == subject_v and compatible(c.value, p.value) for c in actual for p in alternatives):
                continue
            later = [c for c in actual if c.source != source and order.compare(c.source, source)[0] > 0]
            # the outcome: the same value arriving with another release, or the planned release with another value
            moved = [c for c in later if c.subject is not None and c.subject != subject_v
                     and any(compatible(c.value, p.value) for p in alternatives)]
            changed = [c for c in later if c.subject == subject_v]
            outcome = _earliest(order, moved or changed)
            if outcome is None:
                continue
            reported.add((source, subject_v))
            subject = _fmt(subject_v)
            if moved:
                what = f"planned for release {subject}, but {outcome.source} says it came with {_fmt(outcome.subject or ())}"
            else:
                what = f"planned {plan.value_text} for release {subject}, but {outcome.source} says {outcome.value_text}"
            yield Finding.make(
                "contradicted", "warning",
                f"{label}: {what} (plan in {plan.source}, {order.label(plan.source)})",
                paths=[plan.source, outcome.source, *_pages_for(ctx, plan.source)], lines=[plan.line, outcome.line],
                evidence={
                    "fact": label,
                    "plan": {"path": plan.source, "sentence": plan.sentence},
                    "outcome": {"path": outcome.source, "sentence": outcome.sentence},
                },
            )
        # 2. two sources of the same time (or no order at all) that disagree
        seen: set[tuple[str, str]] = set()
        buckets: dict[object, list[Claim]] = defaultdict(list)
        for c in actual:
            # only claims that no date, release or file time orders can contradict each other
            buckets[order.bucket(c.source)].append(c)
        for bucket in buckets.values():
            for i, a in enumerate(bucket):
                for b in bucket[i + 1 :]:
                    if a.source == b.source or compatible(a.value, b.value):
                        continue
                    pair = tuple(sorted((a.source, b.source)))
                    if pair in seen:
                        continue
                    cmp, how = order.compare(a.source, b.source)
                    if cmp != 0:
                        continue
                    if a.subject is not None and b.subject is not None and a.subject != b.subject:
                        continue  # about different releases: both can be true
                    seen.add(pair)  # type: ignore[arg-type]
                    yield Finding.make(
                        "contradicted", "warning",
                        f"{label}: {a.source} says {a.value_text}, {b.source} says {b.value_text}, and neither is newer ({how})",
                        paths=[a.source, b.source], lines=[a.line, b.line],
                        evidence={
                            "fact": label,
                            "a": {"path": a.source, "sentence": a.sentence},
                            "b": {"path": b.source, "sentence": b.sentence},
                        },
                    )


def _earliest(order: Order, claims: list[Claim]) -> Claim | None:
    best: Claim | None = None
    for c in claims:
        if best is None or order.compare(c.source, best.source)[0] < 0:
            best = c
    return best
