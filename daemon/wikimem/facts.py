"""Facts that change: one extractor for the compile, lint and search.

A fact is a statement of a versioned or numeric value about a subject:

    "Acme 1.21 requires macOS 10.15 Catalina or later"      -> min macos            = 10.15
    "The library supports Python 3.9 and newer."            -> min python           = 3.9
    "Acme 0.16.x supports Python 2.7 and Python >= 3.5"     -> min python           = 2.7
    "Drop support for Python 3.8."  (in "Version 3.1.0")    -> min python, drops      3.8
    "0.15.x is the last version supporting Python 2.6"      -> min python, last       2.6
    "Require Toolkit >= 3.0.0."                             -> min toolkit          = 3.0.0
    "The server-side default is unchanged at TLS 1.0"       -> default tls (server) = 1.0
    "the minimum supported version of PostgreSQL is increased from 13 to 14"
                                                            -> min postgresql       = 14, replaced 13
    "We intend for Acme 1.19 to require Acme 1.17 or later for bootstrap"
                                                            -> min go (bootstrap)   = 1.17, a plan for 1.19

Each fact carries the subject normalised (the same fact phrased differently is one key), the
release it belongs to (its changelog section's version and date, else the document's own:
"Acme 1.21 Release Notes"), its series (the product whose releases order it: the document's
product, else its collection), and its role: an outcome, a plan ("will require"), a past
statement ("previously required"), or a quoted older note; past statements and negations
are dropped. Precision over recall: a fact needs a trigger word right before its value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .lexicon import STOPWORDS, product_key, release_numbers, title_release, version_numbers
from .sources.sections import release_of

# a versioned name: "macOS 10.15", "Windows Server 2016", "TLS 1.2", "OS X 10.10", "Linux kernel 2.6.32"
# a capitalized name ("Node.js", "C++", "macOS"); dots inside a name, never at its end
_WORD_NAME = r"(?:[A-Z](?:[\w+.]*[\w+])?|[a-z]+[A-Z](?:[\w+.]*[\w+])?)"
_NAME = rf"{_WORD_NAME}(?:[ ](?:{_WORD_NAME}|kernel)){{0,2}}"
VERSIONED = re.compile(rf"\b(?P<name>{_NAME})\s+(?:version\s+)?v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)")
# lowercase names ("glibc 2.17", "npm 9.1") count only right after a requirement word, with a dotted version
LOWER_AFTER_TRIGGER = re.compile(
    r"\b(?:requires?|required|requiring|at\s+least)\s+(?:the\s+|a\s+)?(?P<name>[a-z][\w+.-]*[\w+])\s+(?:version\s+)?v?(?P<ver>\d+\.\d+(?:\.\d+)*)(?![\w.]*\w)"
)
# "Toolkit >= 3.0.0", "toolkit>=8.1.3", "Lib2>3.1.2": a dependency bound, in any case
BOUND = re.compile(r"\b(?P<name>[A-Za-z][\w.+-]*?[A-Za-z+])\s*(?P<op>>=|>|≥)\s*v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)")
_HEAD_TRIGGER = re.compile(r"(?:Requires?|Required|Requiring|Needs?)\s+")
_MIN_TRIGGER = re.compile(r"\b(?:requires?|requiring|required(?!\s+by)|at\s+least|minimum(?:\s+\w+){0,3}\s+(?:is|of))\b", re.I)
_DEFAULT_TRIGGER = re.compile(r"\b(?:defaults?\s+to|default\s+(?:is|of)|is\s+now|now\s+is|unchanged\s+at|will\s+be)\b", re.I)
_OR_LATER = re.compile(r"^\s*(?:[\w-]+\s+){0,2}(?:or|and)\s+(?:later|newer|higher|above)\b|^[\w-]*\+", re.I)
# "or later" alone is no requirement ("runs on FreeBSD 12.0 or later" describes one port); one of these must come first
_SUPPORT_WORDS = re.compile(r"\b(?:requir\w*|minimum|at\s+least|only\s+(?:supports?|runs?))\b", re.I)
# "supports Python 3.9 and newer", "is compatible with Python versions from 2.4 to 3.2"
_SUPPORTS = re.compile(
    r"\b(?:supports?|supported\s+(?:on|with)|compatible\s+with|works\s+(?:on|with)|runs\s+on)\s+(?:(?:the\s+)?versions?\s+of\s+)?"
    r"(?P<name>[A-Z][\w+.]*)\s+(?:versions?\s+)?(?P<list>(?:from\s+)?(?:>=\s*)?\d+(?:\.\d+)*(?:\s*(?:and\s+[A-Z][\w+.]*\s*(?:>=\s*)?(?=\d)|"
    r"and\s+newer|and\s+later|or\s+newer|or\s+later|up\s+to|,\s*and|,|and|to|or|-|–|\+)\s*(?:\d+(?:\.\d+)*)?)*)")
# what makes one version a lower bound: "3.9 and newer", "3.10+", ">= 3.5", "from 2.4 to 3.2"
_OPEN_ENDED = re.compile(r"newer|later|higher|above|greater|onwards?|\+|>=|\bfrom\b|\bto\b|-|–")
# a list of versions: "3.8", "2.6 and 3.3", "3.7, 3.8, and 3.9" (a serial comma read to the end)
_VERSIONS = r"\d+(?:\.\d+)*(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*\d+(?:\.\d+)*)*"
# "Drop support for Python 3.8", "Python 2.6 and 3.3 are no longer supported"
_DROP = re.compile(r"\b(?:drop(?:ped|s)?|remove[sd]?|end(?:ed|s)?)\s+support\s+for\s+(?P<name>[A-Z][\w+.]*)\s+"
                   rf"(?P<list>{_VERSIONS})", re.I)
# "Drop Python 3.11 support", "Removed Toolkit 0.20 support": the versions before the word "support"
_DROP_AFTER = re.compile(r"\b(?:drop(?:ped|s)?|remove[sd]?)\s+(?P<name>[A-Z][\w+.]*)\s+"
                         rf"(?P<list>{_VERSIONS})\s+support\b", re.I)
# "Support for Python 3.8 has been dropped"
_DROPPED = re.compile(rf"\bsupport\s+for\s+(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_VERSIONS})\s+"
                      r"(?:has\s+been|have\s+been|was|were|is)\s+(?:dropped|removed)\b", re.I)
# words that open a clause: what a from-to statement is about comes after the last of them
_CLAUSE = re.compile(r"\b(?:because|since|as|when|while|so|and|but|that|which|where|if|after|before|now)\b")
_NO_LONGER = re.compile(rf"\b(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_VERSIONS})\s+"
                        r"(?:is|are)\s+no\s+longer\s+supported")
# "0.15.x is the last version supporting Python 2.6, 3.3 and 3.4"
# "... that is supported on FreeBSD 11.x", "... that will run on macOS 10.13 High Sierra"
_LAST = re.compile(r"\b(?P<subject>\d+(?:\.\d+)*)(?:\.x)?\s+is\s+the\s+last\s+(?:version|release)\s+"
                   r"(?:that\s+(?:will\s+|is\s+)?|to\s+)?(?:support(?:s|ing)?|supported\s+on|runs?\s+on|be\s+supported\s+on)\s+"
                   rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_VERSIONS})")
# "the minimum supported version of PostgreSQL is increased from 13 to 14", "upgraded from Unicode 15 to Unicode 17"
_FROM_TO = re.compile(r"\b(?P<what>(?:[\w-]+\s+){1,7}?)(?:is|was|has\s+been|have\s+been|are)?\s*(?:increased|raised|bumped|changed|updated|"
                      r"upgraded|decreased|lowered|reduced)\s+from\s+(?:[A-Z][\w+.]*\s+)?v?(?P<old>\d[\d,.]*\d|\d)\s+to\s+"
                      r"(?:[A-Z][\w+.]*\s+)?v?(?P<new>\d[\d,.]*\d|\d)", re.I)
# a measure a release note says changed: "the maximum stack depth for ...", "the default timeout of ..."
_QUANTITY = re.compile(r"\b(?P<rel>maximum|minimum|default)\s+(?P<qty>(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)\s+(?:for|of|in|on)\b",
                       re.I)
_NO_QUANTITY = frozenset("value values version versions number setting settings".split())  # says not what
_PLAN = re.compile(r"\b(?:will|intend(?:s|ed)?|plan(?:s|ned)?|expect(?:s|ed)?|anticipat\w*|going\s+to|future|propos\w+)\b", re.I)
_PAST = re.compile(r"\b(?:previous(?:ly)?|prior\s+(?:to|versions?)|formerly|used\s+to|earlier\s+versions?|older\s+versions?)\b", re.I)
_NEGATION = re.compile(r"\b(?:no\s+longer|not|n't|never|without)\b", re.I)
_ROLES = {"server": "server", "servers": "server", "server-side": "server", "client": "client", "clients": "client",
          "client-side": "client", "bootstrap": "bootstrap", "bootstrapping": "bootstrap"}
_ROLE_WORD = re.compile(r"\b(?:server-side|client-side|servers?|clients?|bootstrap(?:ping)?)\b", re.I)
# names that are sentence furniture, not products: function words, the parts of a document, and
# the labels of a reference number (an issue, a change list, a standard: "CL 1234", "RFC 9110")
_NOT_NAMES = frozenset("""as in since before after until from with the of and or to for by on at if when this that these
those it its version versions release releases issue issues section chapter figure table page step phase
cl pr bug part level rfc pep iso fips ecma ieee see also note changed new added fixed""".split())
# a lowercase name run into a number ("abc1", "py3") is a version tag, not a product's name
_VERSION_TAG = re.compile(r"[a-z]+\d+")
# words before "requires" that mean "the product itself": anything else names what requires the value
_SCOPE_SKIP = frozenset("""now also still only will to does do did that which so and then currently thus therefore
it we this release releases version versions support for on of the a an is be being further additionally last
intend intends plan expect require requires required requiring update updates updated bump bumps bumped
itself are officially fully formally explicitly actively generally primarily mainly""".split())
# a fact needs one of these words; most sentences have none, and skip the patterns
HINT = re.compile(r"requir|least|minimum|default|later|newer|higher|above|\+|only support|only run|support|compatible|"
                  r">=|>|increased|raised|bumped|upgraded|changed|updated|decreased|lowered", re.IGNORECASE)
DIGIT = re.compile(r"\d")
# HINT for lowercased text: without IGNORECASE the search skips to the characters its words
# start with (a sixth of the time); `has_hint` is what to ask
_HINT_LOW = re.compile(HINT.pattern.lower())


def has_hint(text: str) -> bool:
    """HINT.search(text), asked of the text lowercased."""
    return _HINT_LOW.search(text.lower()) is not None


_LABELS = {"min": "minimum", "default": "default", "value": "version"}


@dataclass(frozen=True)
class Fact:
    key: tuple[str, str, str]  # (relation, entity, role): ("min", "macos", ""), ("default", "tls", "server")
    value: tuple[int, ...]  # the bound or the value; for a drop, the highest version dropped
    value_text: str  # as written ("macOS 10.15 Catalina", "Python 3.9 and newer")
    plan: bool
    subject: tuple[int, ...] | None  # the release it belongs to (a section's, the document's, "Acme 1.19" in a plan)
    source: str  # raw path
    sentence: str
    line: int
    date: str | None = None  # its section's (or document's) date
    series: str = ""  # the product line whose releases order it
    change: str = ""  # "" states the value; "drop" and "last" end support; "from" replaces `old`
    old: tuple[int, ...] = ()  # what a "from A to B" replaced

    def to_json(self) -> list[Any]:
        return [list(self.key), list(self.value), self.value_text, self.plan, list(self.subject) if self.subject else None,
                self.sentence, self.line, self.date, self.series, self.change, list(self.old)]

    @classmethod
    def from_json(cls, source: str, data: list[Any]) -> Fact:
        key, value, text, plan, subject, sentence, line, *rest = data
        date, series, change, old = (rest + [None, "", "", []])[:4]
        return cls(tuple(key), tuple(value), text, plan, tuple(subject) if subject else None, source,  # type: ignore[arg-type]
                   sentence, line, date, series or "", change or "", tuple(old or ()))


@dataclass
class Statements:
    """What extract() reads of one source."""

    path: str
    title: str = ""
    product: tuple[str, tuple[int, ...]] | None = None  # ("go", (1, 22)) from the document's title
    series: str = ""
    date: str | None = None
    # (sentence, line, its release's version, its release's date): a changelog holds many releases
    sentences: list[tuple[str, int, str | None, str | None]] = field(default_factory=list)


def title_version(title: str) -> tuple[str, tuple[int, ...]] | None:
    """("acme", (1, 22)) from "Acme 1.22 Release Notes": the release the title names (the lexicon's
    title_release), with its release numbers."""
    found = title_release(title)
    if found is None:
        return None
    numbers = release_numbers(found[1])
    return (found[0], numbers) if numbers else None


def statements_of(doc: Any, sentences: Any) -> Statements:
    """Statements from a loaded Document and its analysis sentences (each knows its section).
    The series is the product the title names; the caller gives a source without one the
    collection it sits in (timelines.facts_of), which depends on the rest of raw/."""
    sections = doc.sections
    out: list[tuple[str, int, str | None, str | None]] = []
    for s in sentences:
        if s.kind == "heading" or not DIGIT.search(s.text) or not has_hint(s.text):
            continue
        version, date = s.version, None
        if version is None and (release := release_of(sections, s.section)) is not None:
            version, date = release.version, release.date
        out.append((s.text, s.line, version, date))
    product = title_version(doc.title)
    return Statements(doc.path, doc.title, product, product[0] if product else "", doc.date, out)


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


def entity(name: str) -> str | None:
    words = name.split()
    # "As Windows" -> "Windows": leading furniture words are not part of the name
    while words and words[0].lower() in _NOT_NAMES:
        words = words[1:]
    if not words:
        return None
    key = " ".join(words).lower()
    return product_key(key)


_version = version_numbers


def _versions(text: str) -> list[tuple[int, ...]]:
    """The versions a list names: "3.7, 3.8, and 3.9" -> [(3, 7), (3, 8), (3, 9)]."""
    return [version_numbers(v) for v in re.findall(r"\d+(?:\.\d+)*", text)]


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
    kept = [w for w in words if w not in _SCOPE_SKIP and not re.fullmatch(r"v?\d[\w.]*", w)][-2:]
    return " ".join(kept)


def _last(pattern: re.Pattern[str], text: str, end: int) -> re.Match[str] | None:
    found = None
    for found in pattern.finditer(text, 0, end):  # noqa: B007 - the last match is the one wanted
        pass
    return found


def _trailing_name(after: str) -> str:
    """ "Catalina or later" -> "Catalina": the release name that follows a number reads better quoted."""
    m = re.match(r"(\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?=\s|[;,.]|$)", after)
    return m.group(1) if m and m.group(1).strip().lower() not in {"or", "and"} else ""


def in_series(fact: Fact, series: str) -> Fact:
    """A fact of a source whose title names no product, in its collection's series: a role that
    names the collection is the product itself ("Acme supports Python 3.9" in acme/)."""
    from dataclasses import replace

    relation, name, role = fact.key
    return replace(fact, series=series, key=(relation, name, "" if series and role == series.lower() else role))


def extract(doc: Statements) -> list[Fact]:
    product = doc.product[0] if doc.product else None
    own = doc.product[1] if doc.product else None
    out: list[Fact] = []
    for sentence, line, release, release_date in doc.sentences:
        if len(sentence) > 600 or not DIGIT.search(sentence) or not has_hint(sentence):
            continue
        section = release_numbers(release)
        subject_default = section or own
        date = release_date or (doc.date if not section else None)

        def add(key: tuple[str, str, str], value: tuple[int, ...], text: str, plan: bool,
                subject: tuple[int, ...] | None, change: str = "", old: tuple[int, ...] = (),
                sentence: str = sentence, line: int = line, date: str | None = date) -> None:
            out.append(Fact(key, value, text, plan, subject, doc.path, sentence, line, date, doc.series, change, old))

        taken: list[tuple[int, int]] = []  # spans already read as a fact's value
        past = _PAST.search(sentence)
        plan_here = bool(_PLAN.search(sentence))
        # --- support statements: ranges, lists, drops, last versions
        for m in _SUPPORTS.finditer(sentence):
            name = entity(m.group("name"))
            versions = _versions(m.group("list"))
            if not name or not versions or past or (product and name == product):
                continue
            if _NEGATION.search(sentence[max(0, m.start() - 25) : m.start()]):
                continue
            if len(versions) == 1 and not _OPEN_ENDED.search(m.group("list") + sentence[m.end() : m.end() + 20]):
                continue  # "Officially support Python 3.12": a version added, not the oldest one supported
            taken.append((m.start("name"), m.end()))
            listed = re.sub(r"[\s,]*(?:and|or|to|up\s+to|,)$", "", m.group("list").strip())
            # who supports it: "Six supports Python 2.7" is six's, not its folder's neighbours'
            # (the product itself, "it" and "this release" leave the role empty)
            add(("min", name, _scope(sentence[:m.start()], product)), min(versions), f"{m.group('name')} {listed}",
                plan_here, subject_default)
        for pattern, change in ((_DROP, "drop"), (_DROP_AFTER, "drop"), (_DROPPED, "drop"), (_NO_LONGER, "drop")):
            for m in pattern.finditer(sentence):
                name = entity(m.group("name"))
                versions = _versions(m.group("list"))
                if not name or not versions or (product and name == product):
                    continue
                taken.append((m.start(), m.end()))
                add(("min", name, ""), max(versions), f"{m.group('name')} {m.group('list').strip()}", plan_here,
                    subject_default, change)
        for m in _LAST.finditer(sentence):
            name = entity(m.group("name"))
            versions = _versions(m.group("list"))
            if not name or not versions:
                continue
            taken.append((m.start(), m.end()))
            add(("min", name, ""), max(versions), f"{m.group('name')} {m.group('list').strip()}", plan_here,
                _version(m.group("subject")), "last")
        # --- dependency bounds: "Toolkit >= 3.0.0", "toolkit>=8.1.3"
        context = bool(_SUPPORT_WORDS.search(sentence) or re.search(r"\b(?:depend\w*|bump\w*|update\w*)\b", sentence, re.I))
        if ">" in sentence or "≥" in sentence:
            for m in BOUND.finditer(sentence):
                # ">= 3.1" is a lower bound as written; "> 3.1" only where the sentence says it is required
                if any(a <= m.start() < b for a, b in taken) or (m.group("op") == ">" and not context):
                    continue
                name = entity(re.sub(r"\d+$", "", m.group("name")) or m.group("name"))
                if not name or name in STOPWORDS or (product and name == product):
                    continue
                taken.append((m.start(), m.end()))
                add(("min", name, ""), _version(m.group("ver")), m.group(0), plan_here, subject_default)
        # --- "increased from A to B"
        for m in _FROM_TO.finditer(sentence):
            # the words nearest the verb name what changed: "... is dropped because jQuery version
            # is updated from 1.11.0 to 3.1.0" is about jQuery
            what = _CLAUSE.split(m.group("what").lower())[-1]
            words = [w for w in re.findall(r"[a-z][\w+./-]*", what) if w not in STOPWORDS and w not in _SCOPE_SKIP]
            if not words:
                continue
            relation = "min" if "minimum" in what else "default" if "default" in what else "value"
            subject_words = [w for w in words if w not in ("minimum", "default", "supported", "version", "maximum")]
            if not subject_words:
                continue
            # "upgraded from Unicode 15 to Unicode 17" names the thing; "version of PostgreSQL" too
            named = re.search(r"\bfrom\s+([A-Z][\w+.]*)\s+v?\d", m.group(0)) or re.search(r"\bof\s+([A-Z][\w+.]*)", m.group(0))
            key_entity = named.group(1).lower() if named else " ".join(subject_words[-3:])
            # "The maximum stack depth for ... goroutine profiles has been raised from 32 to 128":
            # what changed is the maximum stack depth, however far from the verb it is said
            quantity = _QUANTITY.search(sentence[: m.end("what")])
            if not named and quantity is not None and quantity.group("qty").lower().split()[-1] not in _NO_QUANTITY:
                relation = "value"
                key_entity = f"{quantity.group('rel').lower()} {quantity.group('qty').lower()}"
            taken.append((m.start(), m.end()))
            add((relation, product_key(key_entity), ""), _version(m.group("new")),
                m.group(0).strip(), plan_here, subject_default, "from", _version(m.group("old")))
        # --- "requires X 1.2 or later", "defaults to TLS 1.2"
        out.extend(_requirements(doc, sentence, line, subject_default, date, product, own, taken))
    return out


def _requirements(doc: Statements, sentence: str, line: int, subject_default: tuple[int, ...] | None,
                  date: str | None, product: str | None, own: tuple[int, ...] | None,
                  taken: list[tuple[int, int]]) -> list[Fact]:
    out: list[Fact] = []
    mentions: list[re.Match[str] | _Mention] = list(VERSIONED.finditer(sentence))
    seen = {(m.start(), m.end()) for m in mentions}
    for low in LOWER_AFTER_TRIGGER.finditer(sentence):
        name = low.group("name")
        if name not in STOPWORDS and name not in _NOT_NAMES and not _VERSION_TAG.fullmatch(name) \
                and (low.start("name"), low.end()) not in seen:
            mentions.append(_Mention(low))
    mentions.sort(key=lambda m: m.start())
    mentions = [m for m in mentions if not any(a <= m.start() < b for a, b in taken)]
    if not mentions:
        return out
    spans = [(m.start(), m.end()) for m in mentions]
    has_default = "default" in sentence.lower()
    values: list[tuple[int, int]] = []
    for m in mentions:
        raw_name = m.group("name")
        # "Requires Python 3.6": a capitalized trigger at the start of a sentence reads as part of the name
        head = _HEAD_TRIGGER.match(raw_name)
        name = entity(raw_name[head.end():] if head else raw_name)
        if not name:
            continue
        window = max(0, m.start() - 60)
        before = sentence[window : m.start()]
        after = sentence[m.end() : m.end() + 40]
        relation = None
        trigger_at = None
        last = _last(_MIN_TRIGGER, sentence, m.start())
        if head:
            relation, trigger_at = "min", m.start()
        elif last and m.start() - last.end() <= 35 and not VERSIONED.search(sentence, last.end(), m.start()):
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
        if product and name == product and not role:
            continue  # the product requiring itself ("requires Acme 1.21") names no fact key: which feature needs it
        plan = bool(_PLAN.search(sentence, 0, m.start()))
        subject = None
        if product:
            for s in VERSIONED.finditer(lead):
                if entity(s.group("name")) == product and (s.start(), s.end()) not in values:
                    subject = _version(s.group("ver"))
        if subject is None and not plan:
            subject = subject_default
        values.append((m.start(), m.end()))
        start = m.start() + (head.end() if head else 0)
        value_text = sentence[start : m.end() + len(_trailing_name(after))].strip()
        out.append(Fact((relation, name, role), _version(m.group("ver")), value_text, plan, subject, doc.path,
                        sentence, line, date, doc.series))
    return out


def label(key: tuple[str, str, str], sample: Fact | None = None) -> str:
    """"minimum macOS version", "default TLS version (server)": what a fact is about, in words."""
    relation, name, role = key
    size = len(name.split())
    shown = name
    if sample is not None and sample.value_text:
        words = re.sub(r"[><=≥]+.*$", "", sample.value_text).split()
        if words and relation != "value" and sample.change != "from":
            shown = " ".join(words[:size]) or name
    if name == "macos":
        shown = "macOS"
    elif shown == name and sample is not None:
        # the sentence's own spelling of the name ("jQuery", "MathJax"), not the key's
        spelled = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", sample.sentence, re.IGNORECASE)
        shown = spelled.group(0) if spelled else name
    if sample is not None and sample.change == "from":
        return f"{shown}" + (f" ({role})" if role else "")
    what = _LABELS.get(relation, relation)
    return f"{what} {shown} version" + (f" ({role})" if role else "")
