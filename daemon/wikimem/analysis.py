"""Reading a Document: sentences, the document's own lead, the facts a reader asks for, and what
the document defines or is about.

Pure functions over a Document; the result (SourceAnalysis) is plain data, cached in state.db
by the source's hash so an unchanged source is never analysed twice.

Concept evidence, strongest first (the levels the offline backend counts):

- ABOUT (5): the document's title names it, and its text keeps talking about it;
- DEFINED (4): a glossary or definition-list term, an API description (`.. py:data::`),
  an index entry, or a sentence that defines it ("*Ownership* is a set of rules",
  "a hashing function called *SipHash*");
- HEADED (3): a section is named for it, and the section talks about it;
- CODE (2): the markup marks it as an API name (a type-like code span, a Sphinx role).

Mentions (how often each phrase occurs) decide which sources a concept gathers.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache, partial
from itertools import chain
from typing import Any

from .facts import BREAKING_PREFIX, REMOVE_VERB, REMOVED_PASSIVE
from .facts import record as fact_record
from .lexicon import STOPWORDS, find_date, parse_version, stem, version_key, word_key
from .patterns import lazy
from .sources import Document, Section, xref
from .sources.document import SIGNATURE
from .sources.sections import release_of
from .words import (
    CHATTY,
    CODE_SPAN,
    REFERS_BACK,
    CaseBlind,
    code_like,
    holds_any,
    lowercase_pattern,
    may_hold,
    narrates,
    says_name,
)

# bump when analysis output changes: cached analyses of another version are recomputed
ANALYSIS_VERSION = 147

ABOUT, DEFINED, HEADED, CODE = 5, 4, 3, 2

# the kinds of things technical writing names all the time ("the function returns", "pass an
# option"), but what a chapter or a reference page may be about ("Functions", "Options", "Error
# Handling", "Packages and Crates"): a word, or an end of a phrase, as any other; alone, named
# only by a source about it (its title), and a concept only then (offline_concepts.choose_in)
NAMED_THINGS = frozenset(
    """function functions method methods class classes module modules package packages library libraries
    error errors test tests type types variable variables field fields option options argument arguments
    command commands group groups""".split())

# words that are about the document rather than its subject, or say nothing on their own:
# never a concept alone, never the first or last word of one
GENERIC = frozenset(
    """example examples chapter chapters section sections listing listings figure figures note notes
    page pages part parts following follow look looks first second third last next previous new old
    good better best bad lot lots kind kinds sort type types thing way case cases time times number
    numbers point points line lines end start idea ideas reason reasons result results problem
    problems question questions answer answers detail details information change changes changed
    introduction overview summary conclusion today tomorrow yesterday year years day days month
    months week weeks people person work works working want wants try tries trying help helps able
    different various certain specific particular general common simple small large big little
    important main whole rest sure true false yes also instead already actually basically simply
    text document documents file files item items list step steps usage user users value values
    code program programs programming appendix filename src content contents data name names output input add write read build source
    project object update create set call run make show level detail use available possible
    provide provides provided allow allows allowed support supports supported include includes included
    based called known able same own certain really many much several instead rather often usually
    default defaults option options argument arguments version versions release releases feature features
    issue issues fix fixes fixed bug bugs improvement improvements behavior behaviour support way
    thing stuff part section document documentation docs doc see also note warning tip important
    method methods function functions class classes module modules package packages library libraries
    error errors test tests tool tools command commands system systems process processes run running
    value variable variables field fields key keys word words term terms form forms mode modes
    check checks other others place places way level order group groups set sets start end begin
    hello world foo bar baz none nothing everything anything something yes no ok
    keep keeps kept install installs installed installing register registers registered delete deletes
    deleted handle handles handled handling useful basic basics solution solutions development local
    static auto front back top bottom left right full empty single multiple extra special whole
    easy hard quick fast slow short long high low open close closed current previous similar
    additional existing original separate standard normal proper actual real simple complex
    provide return returns returned get set sets put move moves moved copy copies copied pass passes
    passed apply applies applied enable enables enabled disable disables disabled define defines
    defined describe describes described explain explains explained mention mentions mentioned
    need needs needed allow allows allowed happen happens happened become becomes became
    learn learns learned understand understands understood discuss discusses discussed
    want wants wanted tell tells told give gives given take takes taken find finds found
    consider considers considered require requires required contain contains contained
    several common usual usually typical typically various variety rest kind sort lot
    thing things stuff idea ideas reason reasons purpose purposes goal goals approach approaches
    way ways means aspect aspects feature features concept concepts topic topics overview
    storing defining using creating writing reading adding building running processing putting
    validating bringing separating accepting refactoring improving redirecting extending customizing
    installing publishing treating applying implementing controlling working getting making
    understanding developing yielding transferring dealing introducing starting setting checking
    passing returning calling changing moving comparing converting declaring specifying organizing
    grouping listing sharing showing taking telling turning keeping looking finding giving letting
    choosing combining telling describing explaining mixing filling printing refactoring
    functionality book books tutorial chapter programming language languages
    generate generates generated generating inline
    guide guides trick tricks tip tips recipe recipes cookbook howto faq faqs""".split()
) - NAMED_THINGS
# single words that describe rather than name (adjectives and participles): not a thing alone
_ADJECTIVAL = lazy(r"(?:ous|ful|less|ible|able|ed)$")
_NOT_ADJECTIVAL = frozenset("embed seed speed feed need bed shed table cable variable label ssh".split())
# leading words of a title that say what the page does, not what it is about
_TITLE_LEAD = lazy(
    r"^(?:(?:an?|the)\s+)?(?:(?:a\s+)?(?:brief\s+|quick\s+|gentle\s+)?(?:introduction|guide|overview|tour)\s+(?:to|of)\s+"
    r"|(?:how\s+to|what\s+(?:is|are)|working\s+with|getting\s+started\s+with|getting\s+started|"
    r"more\s+about|all\s+about|notes\s+on|using\s+the|using|understanding)\s+)+",
    re.IGNORECASE)

# a path of names (crypto/tls, net/http, TCP/IP) is one word; so is a number with its dots
# a name joined by a dot to a short lowercase ending is one word: a file or a name spelled with
# its extension ("coverage.py", "conf.py", "node.js"), never "coverage" and a word "py"; a
# version written with its "v" ("v1.16.0") is one number, never a word "v1"
_VERSION_WORD = r"(?<![\w.])[vV][0-9]+(?:\.[0-9]+)+(?![\w.])"
_FILE_WORD = r"(?<![\w.])[A-Za-z][A-Za-z0-9_]*\.[a-z]{2,4}(?![\w.])"
_PATH_WORD = r"[A-Za-z][A-Za-z0-9]*(?:/[A-Za-z][A-Za-z0-9]*)+(?![\w/])"
_PLAIN_WORD = r"[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)?|[0-9]+(?:\.[0-9]+)*"
_WORD = lazy("|".join((_VERSION_WORD, _FILE_WORD, _PATH_WORD, _PLAIN_WORD)))
# A file's name and a path each need a mark in the text (a letter, digit or underscore, a dot, a
# lowercase letter; a slash): a text without it is read by _WORD less that alternative, which
# finds the same words, each read once rather than once more for each alternative that fails
# on it (most sentences have neither: half the time of reading their words)
_WORD_NO_FILE = lazy("|".join((_VERSION_WORD, _PATH_WORD, _PLAIN_WORD)))
_WORD_NO_PATH = lazy("|".join((_VERSION_WORD, _FILE_WORD, _PLAIN_WORD)))
_WORD_NEITHER = lazy("|".join((_VERSION_WORD, _PLAIN_WORD)))
# ... and a text without a digit (most sentences) has neither a version nor a number: its words
# are the plain words that open on a letter (possessive: nothing after a part can fail, so
# nothing is given back, and the engine keeps no place to go back to)
_WORD_LETTERS = lazy(r"[A-Za-z][A-Za-z0-9]*+(?:['’][A-Za-z]++)?+")
# (it opens on the dot and looks behind it for the character before: the search skips from dot to
# dot rather than trying every character)
_FILE_MARK = lazy(r"\.(?<=[A-Za-z0-9_]\.)[a-z]")
_DIGIT_MARK = lazy(r"[0-9]")


def _words_in(text: str) -> Callable[[str], list[str]]:
    """_WORD.findall, or that of the variant that finds the same words in `text` (and in any part
    of it)."""
    if "/" in text:
        return (_WORD if _FILE_MARK.search(text) else _WORD_NO_FILE).findall
    if _FILE_MARK.search(text):
        return _WORD_NO_PATH.findall
    return (_WORD_NEITHER if _DIGIT_MARK.search(text) else _WORD_LETTERS).findall
# the marks that close a sentence stay with it: "**Failures are retried.** A batch ..." is
# "**Failures are retried.**" and "A batch ...", not an emphasis left open
# the next sentence starts with a capital, a digit or a code span ("`# fmt: skip` can be mixed ...")
# (the pattern opens on the mark, not on a look behind at it: a search skips from mark to mark
# rather than trying the pattern at every character; group 1 and the end are the same)
_SENTENCE_END = lazy(r"[.!?]([\"'”’)\]*_]*)\s+(?=[\"'“‘(\[*_]*(?:[A-Z0-9]|`))")
_ABBREV = lazy(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|Dr|St|No|Fig|approx|incl|resp|esp|Inc|Ltd)\.|\b[A-Z]\.)$")
_ABBREV_CHARS = len("approx.")  # the longest match of _ABBREV: it is looked for at the end only
_NEWLINE = lazy("\n")
_NAME_LIKE = lazy(r"[a-z_][\w.:/!-]*[\w!]|[a-z_]|--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# a command-line option's long name (`--line-length`): a name a reference documents, as a flag
# or a setting is; its key keeps the dashes, and spelled without them it is the words' phrase
_OPTION_NAME = lazy(r"--[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?:[ =][A-Z_<>\[\]]+)?")
# code that PDF and plain-text extraction leave in prose ("weekend := []string{ ... }")

# --- what a reader asks for -------------------------------------------------------------------
_DEFINES = lazy(
    r"^(?:(?:an?|the)\s+)?(?P<mark>\*\*|\*|_|`)?(?P<term>[A-Za-z][\w’'./:<>-]*(?:\s+[\w’'.<>-]+){0,3}?)(?P=mark)?"
    r"(?:\s*\([^()]{1,40}\))?,?\s+(?:is|are|refers\s+to|means|describes|represents|stands\s+for)\s+"
    r"(?:(?:an?|the|one|any|how|what|where|when|used|also|essentially|simply|basically|called)\b|[a-z]+(?:ed|ing)\b)",
    re.IGNORECASE)
# what every match of _DEFINES holds: its verb with a space on each side (a test before it)
_DEFINES_VERB = CaseBlind(lazy(r"\s(?:is|are|refers|means|describes|represents|stands)\s", re.IGNORECASE))
_CALLED = lazy(r"\b(?:called|known\s+as|referred\s+to\s+as|named|termed)\s+(?:an?\s+|the\s+)?(\*\*|\*|_|`)(?P<term>[^*_`\n]{2,60})\1")
_DEFAULT = CaseBlind(lazy(r"\bdefaults?\b|\bby\s+default\b|\bdefault(?:s|ed)?\s+to\b", re.IGNORECASE))
# "Default: 8", "defaults to 8"; "The default option is `normal`"; an option's value marked as its
# default where it is described ("Specifying `--jobs 0` (default) disables ...")
_DEFAULT_VALUE = lazy(r"^\s*[*_]{0,2}default(?:\s+value)?(?:\s*[:=][*_]{0,2}|[*_]{0,2}\s*[:=])\s*(?P<value>.+?)\s*$|\bdefaults?\s+to\s+(?P<value2>.+?)[.;]?\s*$"
                      r"|^the\s+default\s+(?:option|value|setting|choice|mode)\s+is\s+(?P<value3>`[^`]{1,60}`)"
                      r"|`-{1,2}[\w-]+[ =](?P<value4>[^`\s]{1,40})`\s*\(default\)"
                      r"|^\s*default\s+is\s+(?P<value5>`[^`]{1,60}`)|\((?P<value6>`[^`]{1,60}`)\s+by\s+default\)",
                      re.IGNORECASE)
_REQUIRE = lazy(
    r"\b(?:requires?|required|must|minimum|maximum|at\s+least|at\s+most|no\s+(?:more|less|later|earlier|longer)\s+than"
    r"|limit(?:ed|s)?|supports?|supported|compatible|deprecated|removed|no\s+longer|discontinued|drops?\s+support"
    r"|license[ds]?|only)\b", re.IGNORECASE)
# (it opens on its first digit, then looks at the character before: the same test as a look
# behind before it, and a search skips from digit to digit rather than trying every character)
_NUMBER = lazy(r"\d(?<![\w.]\d)\d*(?:[.,]\d+)*(?:\s*(?:%|ms|s|seconds?|minutes?|hours?|days?|[KMGT]i?B|bytes?|bits?|x))?\b")
_NOTE_LABEL = lazy(r"^(?:Note|Warning|Tip|Important|Hint|Caution|Danger|Attention|Error|See also|To do|Includes"
                   r"|Sidebar|Topic)\b")
_FLAGGED = lazy(r"^(Note|Warning|Important|Caution|Danger|Attention|Tip):\s")  # _weigh's first letters: NWICDAT
_EMPHASIS = lazy(r"(?<![\w*])(\*\*|\*|_)([A-Za-z][A-Za-z \-'’]{2,40}?)\1(?![\w*])")
_NUMBER_AFTER = lazy(r"[ -]?[0-9]")  # "PEP 484", "RFC-7230": a number right after a name
# (its first capital comes before the test of the character before it, the same test: a search
# then skips from capital to capital rather than trying the pattern at every character)
_ACRONYM = lazy(r"[A-Z](?<![\w.-][A-Z])[A-Z0-9]{2,7}(?![\w.-])")
_XREF_WORDS = ("listing", "figure", "chapter", "section", "table", "appendix", "example")  # "Listing 3-1" opens so
_XREF = lazy(r"\b(?:" + "|".join(_XREF_WORDS) + r")s?\s+[\dA-Z]+(?:[-.]\d+)*", re.IGNORECASE)


@lru_cache(maxsize=131072)
def _fold(word: str) -> str:
    """A word's key as the lexicon gives it (acronyms and names decided on the word as written);
    a path of names is lowercased whole, and "and/or" says nothing."""
    if "/" in word:
        low = word.lower()
        return "or" if any(part in STOPWORDS for part in low.split("/")) else low
    if "." in word:
        return word.lower()  # a name with its extension ("coverage.py")
    return word_key(word)


@lru_cache(maxsize=65536)
def code_token(span: str) -> str | None:
    """The name a code span stands for, as one token: `Box<T>` -> "box", `url_for()` -> "url_for",
    `pkg.Client` -> "pkg.client"; None for code that is not a name (`let x = 5;`)."""
    name = re.sub(r"<[^<>]*>", "", span).strip()
    name = re.sub(r"\([^()]*\)$", "", name).strip().lstrip("~!&*").rstrip(":,")
    name = name.lower()
    if not name or len(name) > 60 or not _NAME_LIKE.fullmatch(name):
        return None
    return name


def tokens(text: str) -> list[str]:
    """Word keys (lexicon.word_key: lowercase, possessives dropped, plurals folded, acronyms
    and names decided on the words as written); a code span that names something is one token
    (so `pkg.json.dumps` is never split into phrases), other code none."""
    words = _words_in(text)
    if "`" not in text:
        return list(map(_fold, words(text)))
    out: list[str] = []
    at = 0
    for match in CODE_SPAN.finditer(text):
        out.extend(map(_fold, words(text[at:match.start()])))
        token = code_token(match.group(1))
        if token:
            out.append(token)
        at = match.end()
    out.extend(map(_fold, words(text[at:])))
    return out


def is_content(word: str) -> bool:
    return word not in STOPWORDS and not word[0].isdigit() and len(word) > 1 and not (
        "." in word and _V_VERSION.fullmatch(word))


_V_VERSION = lazy(r"v[0-9]+(?:\.[0-9]+)+")


@lru_cache(maxsize=131072)
def is_edge(word: str) -> bool:
    """May a word be a concept alone? Not a stop word, a number, a generic or a describing word."""
    return is_content(word) and word not in GENERIC and not (
        _ADJECTIVAL.search(word) and word not in _NOT_ADJECTIVAL and "_" not in word and len(word) > 4)


def _is_code(token: str) -> bool:
    return not token.isalnum() and not token.replace("'", "").isalnum()


# what phrase_keys asks of a token, as bits: computed once per distinct token
_CONTENT, _EDGE, _CODE, _GENERIC_WORD, _STOPS_PHRASE = 1, 2, 4, 8, 16


@lru_cache(maxsize=65536)
def _token_bits(token: str) -> int:
    bits = 0
    if is_content(token):
        bits |= _CONTENT
    if is_edge(token):
        bits |= _EDGE
    if _is_code(token):
        bits |= _CODE
    if token in GENERIC:
        bits |= _GENERIC_WORD
    if token[0].isdigit() or (token in STOPWORDS and token != "of"):
        bits |= _STOPS_PHRASE  # inside a phrase, it ends it ("of" joins a name: "code of conduct")
    return bits


def phrase_keys(toks: list[str]) -> set[str]:
    """Every word that may be a concept alone, and every two- and three-word phrase whose first
    and last words are content words, one of them not generic ("command line interface",
    "enumerated list"), as space-joined keys; a code token is a key alone, never part of a
    phrase. (The loop over phrase lengths is written out: a third less of the time.)"""
    keys: set[str] = set()
    n_toks = len(toks)
    bits = list(map(_token_bits, toks))
    for i, first in enumerate(bits):
        if not first & _CONTENT:
            continue
        if first & _EDGE:
            keys.add(toks[i])
        if first & _CODE or i + 1 >= n_toks:
            continue
        second = bits[i + 1]
        if second & _CODE:
            continue
        if second & _CONTENT and (first | second) & _EDGE and not (first & second & _GENERIC_WORD):
            keys.add(toks[i] + " " + toks[i + 1])
        if i + 2 >= n_toks or second & _STOPS_PHRASE:
            continue  # a word that stops a phrase ends it ("of" joins a name: "code of conduct")
        last = bits[i + 2]
        if not last & _CODE and last & _CONTENT and (first | last) & _EDGE and not (first & last & _GENERIC_WORD):
            keys.add(toks[i] + " " + toks[i + 1] + " " + toks[i + 2])
    return keys


def name_key(surface: str) -> str | None:
    """Key for a term, a heading phrase or a code span: `Box<T>` -> "box", "Hash Maps" -> "hash map"."""
    surface = surface.strip().strip("*_")
    if surface.startswith("`") and surface.endswith("`"):
        return code_token(surface.strip("`"))
    toks = tokens(surface)
    if not toks or len(toks) > 3:
        return None
    if not is_content(toks[0]) or not is_content(toks[-1]):
        return None
    if len(toks) == 1 and (len(toks[0]) < 2 or not is_edge(toks[0])):
        return None
    if len(toks) > 1 and not (is_edge(toks[0]) or is_edge(toks[-1])):
        return None
    if any(t in STOPWORDS and t != "of" for t in toks[1:-1]):
        return None
    return " ".join(toks)


@dataclass(frozen=True)
class Sentence:
    text: str
    line: int
    kind: str  # para | item | table | heading | term | data (a row of a long table)
    section: int = -1  # index into the analysis's sections
    subject: str | None = None  # the term the sentence defines or describes (`DEBUG`)
    version: str | None = None  # the release the markup ties it to
    end: int = 0  # the line it ends on, when it runs over several (a citation covers them all)
    # its tokens (`tokens`) space-joined, as the analysis made them, for the pages to read rather
    # than tokenize it again; None where the analysis kept none (a row of data, an older cache)
    words: str | None = field(default=None, compare=False, repr=False)


@dataclass
class SourceAnalysis:
    """What the offline backend knows about one source; JSON-serializable."""

    title: str
    format: str
    date: str | None
    anchor: str
    outline: list[tuple[int, str, int]]  # (level, text, line): every heading
    lead: list[int]  # sentence indexes of the document's own lead, in order
    facts: list[int]  # the sentences a reader asks for, in document order
    terms: dict[str, int]  # phrase key -> mentions in this source
    signals: dict[str, list[Any]]  # phrase key -> [evidence level, surface form]
    sentences: list[Sentence] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    version: str | None = None  # the release the whole document is about
    description: str | None = None
    sections: list[list[Any]] = field(default_factory=list)  # [title, level, line, parent, version, date]
    defaults: list[list[Any]] = field(default_factory=list)  # [subject, default value, sentence index]
    definitions: dict[str, int] = field(default_factory=dict)  # key -> the sentence that defines it here
    headed: dict[str, int] = field(default_factory=dict)  # key -> the section named for it
    toc: list[list[Any]] = field(default_factory=list)  # [target, title, line, group]: the documents it lists
    gist: str = ""  # the document's lead in a line, as another document's page lists it (offline_hubs)
    code: dict[str, list[Any]] = field(default_factory=dict)  # fact -> [lines, end line] of the short code it introduces
    fact_bytes: dict[str, int] = field(default_factory=dict)  # heading line -> bytes of its key facts
    # the terms each section defines ([section, name, line], the first name of each entry), and
    # the bytes of the key facts under each term's line: a section too large for a page is split
    # along them (offline_pages._expanded)
    term_heads: list[list[Any]] = field(default_factory=list)
    term_bytes: dict[str, int] = field(default_factory=dict)
    claims: dict[str, Any] = field(default_factory=dict)  # facts.py's record: the source's profile and facts
    date_line: int | None = None  # the line that states the document's date, when its text does
    named: bool = False  # the title is the file's name (sources.title_from_name): the document gives none
    labels: list[list[Any]] = field(default_factory=list)  # `.. _label:`: [name, line, title or None]
    xrefs: list[list[str]] = field(default_factory=list)  # the references its sentences make: [kind, target]
    title_from: str | None = None  # the file whose title the document shows (Document.title_from)
    summary: list[int] = field(default_factory=list)  # kept for older callers: same as lead
    tokens: list[list[str]] = field(default_factory=list)  # each sentence's (none for data): Sentence.words

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "tokens"}  # shallow: asdict deep-copies
        data["outline"] = [list(o) for o in self.outline]
        data["sentences"] = [[s.text, s.line, s.kind, s.section, s.subject, s.version, s.end, words]
                             for s, words in zip(self.sentences, self._words(), strict=True)]
        return data

    def _words(self) -> list[str | None]:
        """Each sentence's Sentence.words: its tokens joined, as the analysis made them."""
        if not self.tokens:
            return [s.words for s in self.sentences]
        return [" ".join(t) if s.kind != "data" else None for s, t in zip(self.sentences, self.tokens, strict=True)]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceAnalysis:
        data = dict(data)
        data["sentences"] = [Sentence(*s) for s in data.get("sentences", [])]
        data["outline"] = [tuple(o) for o in data.get("outline", [])]
        return cls(**data)


def _entry_heading(blocks: list[Any], index: int) -> bool:
    """Whether the block at `index` is a heading that stands for the definition list entry right
    under it (sources.sections.term_sections): the term says it, once."""
    block = blocks[index]
    if block.kind != "heading" or index + 1 >= len(blocks):
        return False
    term = blocks[index + 1]
    return term.kind == "term" and term.line == block.line and term.text == block.text


def split_sentences(doc: Document) -> list[Sentence]:
    return _split(doc)[0]


def _split(doc: Document) -> tuple[list[Sentence], list[int]]:
    """The sentences, and for each the index of the block it comes from."""
    out: list[Sentence] = []
    block_of: list[int] = []
    for index, block in enumerate(doc.blocks):
        if block.kind == "code" or _entry_heading(doc.blocks, index):
            continue
        before = len(out)
        if block.kind in ("heading", "table", "term"):
            # a row of a long table is data, not prose (Block.data): a sentence of its own kind,
            # which no concept, fact or key point is taken from
            kind = "data" if block.data else block.kind
            for offset, row in enumerate(block.text.split("\n")):
                row = row.strip().strip("|").strip() if block.kind == "table" else " ".join(row.split())
                if row:
                    out.append(Sentence(row, block.line + (offset if block.kind != "table" else 0), kind,
                                        block.section, block.subject, block.version))
            block_of.extend([index] * (len(out) - before))
            continue
        text = block.text
        line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)] if "\n" in text else [0]
        pieces: list[tuple[int, str]] = []
        start = 0
        for m in _SENTENCE_END.finditer(text):
            candidate = text[start : m.end(1)]
            head = candidate.rstrip("\"'”’)]*_")
            # (searched from where a match may start, which sees the characters before it for \b)
            if _ABBREV.search(head, max(0, len(head) - _ABBREV_CHARS)) or candidate.count("`") % 2:
                continue  # an abbreviation's period, or one inside a code span ("`SELECT ... FOR UPDATE`")
            pieces.append((start, candidate))
            start = m.end()
        pieces.append((start, text[start:]))
        for offset, piece in pieces:
            clean = " ".join(piece.split())
            if len(clean) < 3:
                continue
            line_index = bisect_right(line_starts, offset) - 1
            last = line_index + piece.count("\n") if len(line_starts) > 1 else 0
            out.append(Sentence(clean, block.line + line_index, block.kind, block.section, block.subject,
                                block.version, block.line + last if last > line_index else 0))
        block_of.extend([index] * (len(out) - before))
    return out, block_of


# --- the analysis ------------------------------------------------------------------------------


def analyze(doc: Document) -> SourceAnalysis:
    sentences, block_of = _split(doc)
    toks = [tokens(s.text) if s.kind != "data" else [] for s in sentences]
    keys_of = [phrase_keys(t) for t in toks]
    # each counter counted in one go, not by an update() a sentence (a fifth of analyze's own time)
    terms: Counter[str] = Counter(chain.from_iterable(keys_of))
    prose = [i for i, s in enumerate(sentences) if s.kind in ("para", "item", "table")]
    signals: dict[str, list[Any]] = {}
    definitions: dict[str, int] = {}
    headed: dict[str, int] = {}

    def signal(key: str | None, level: int, surface: str) -> None:
        if not key or _generic(key) or (level < ABOUT and key in NAMED_THINGS):
            return  # a kind of thing ("function") counts where a source is about it, not for a mention
        terms.setdefault(key, 1)
        current = signals.get(key)
        if current is None or level > current[0]:
            signals[key] = [level, surface.strip()]

    # ABOUT: what the title names and the text keeps talking about
    prose_terms: Counter[str] = Counter(chain.from_iterable(keys_of[i] for i in prose))
    about = _subject_keys(doc.title, prose_terms, min_tf=1 if len(prose) < 15 else 2)
    for rank, (key, surface, said) in enumerate(about):
        # the title's main phrase; a word of it ("control" in "Control Flow") is weaker evidence,
        # and so is a word the text hardly says beside the main one ("Together" in "Putting It
        # All Together: Futures, Tasks, and Threads", "Fail" in "Refutability: Whether a
        # Pattern Might Fail to Match")
        overlaps = rank > 0 and any(set(key.split()) & set(k.split()) for k, _, _ in about[:rank])
        seldom = rank > 0 and said * 4 < about[0][2]
        signal(key, HEADED if overlaps or seldom else ABOUT, surface)

    # HEADED: a section named for it that talks about it
    in_section: dict[int, list[int]] = {}
    for i in prose:
        in_section.setdefault(sentences[i].section, []).append(i)
    by_section = {section_index: Counter(chain.from_iterable(keys_of[i] for i in members))
                  for section_index, members in in_section.items()}
    entry_lines = {b.line for i, b in enumerate(doc.blocks) if _entry_heading(doc.blocks, i)}
    blocks_in: dict[int, list[Any]] = {}  # section -> its blocks, gathered once a heading asks

    def written_as_code(section: int, name: str) -> bool:
        if not blocks_in:
            for b in doc.blocks:
                blocks_in.setdefault(b.section, []).append(b)
        return _written_as_code(blocks_in.get(section, ()), name)

    for index, section in enumerate(doc.sections):
        if section.level <= 1 and section.title == doc.title:
            continue
        if section.line in entry_lines:
            continue  # a definition list's entry read as a section: its term is the evidence
        entry = entry_names(section.title, partial(written_as_code, index)) \
            if not doc.version and not release_of(doc.sections, index) else []
        if entry:
            # a section headed by nothing but a name in code (`ClientSession`, `--line-length`)
            # is that name's entry in a reference: it defines the name, though its text, which
            # describes it, need not say the name again. In a release's notes such a section
            # lists what changed in the name, and defines nothing
            for key, surface in entry:
                signal(key, DEFINED, surface)
                # of two entries for one name, the outer one is its own (a top-level setting's,
                # not that of the option of the same name inside another setting's entry)
                if key not in headed or doc.sections[headed[key]].level > section.level:
                    headed[key] = index
            continue
        for key, surface, _ in _subject_keys(section.title, by_section.get(index, Counter()), min_tf=1, limit=2):
            signal(key, HEADED, surface)
            headed.setdefault(key, index)

    # DEFINED: terms, definitions, index entries
    for i, s in enumerate(sentences):
        if s.kind == "term":
            api = _looks_like_api(s.text)
            term_key = name_key(f"`{s.text}`") if api else name_key(s.text)
            if term_key:
                key = term_key
                surface = f"`{s.text}`" if api else s.text
                # a one-word term of a definition list is often a value ("strict", "none"), not a
                # thing; a member described inside its owner's entry (a method in its class's) is
                # found on the owner's page: the owner is what the reference is organised around
                member = doc.blocks[block_of[i]].level > 0
                signal(key, DEFINED if (api or " " in key or s.text[:1].isupper()) and not member else HEADED, surface)
                definition = next((j for j in range(i + 1, min(i + 4, len(sentences)))
                                   if sentences[j].kind in ("para", "item") and sentences[j].subject == s.subject), None)
                if definition is not None:
                    definitions.setdefault(key, definition)
            continue
        if s.kind not in ("para", "item"):
            continue
        found = defined_term(s.text)
        if found:
            defined, surface, strong = found
            if strong or (defined in prose_terms and prose_terms[defined] >= 2):
                signal(defined, DEFINED if strong else HEADED, surface)
                definitions.setdefault(defined, i)
    for term, _line in doc.keywords:
        signal(name_key(term), DEFINED, term)
    # a term the author emphasized where it is introduced ("The *canary release* sends ..."), and
    # said again: a name set in bold once and never again is emphasis, not a term (the bold
    # attribution of a quote, "**A. Person**, core developer:")
    for i in prose:
        if "*" not in sentences[i].text and "_" not in sentences[i].text:
            continue  # most sentences: no mark of emphasis
        for match in _EMPHASIS.finditer(sentences[i].text):
            emphasized = name_key(match.group(2))
            if emphasized and emphasized not in signals and prose_terms.get(emphasized, 0) >= 2:
                signal(emphasized, HEADED, match.group(2))
                definitions.setdefault(emphasized, i)

    # CODE: names the markup marks as API (type-like code spans, roles)
    code_counts: Counter[str] = Counter()
    surfaces: dict[str, str] = {}
    for i in prose:
        if "`" not in sentences[i].text:
            continue
        for match in CODE_SPAN.finditer(sentences[i].text):
            span = match.group(1).strip()
            token = code_token(span)
            if token and ("." not in token or token.count(".") == 0) and _api_name(span):
                code_counts[token] += 1
                surfaces.setdefault(token, f"`{span}`")
    # an acronym the text keeps using is a name too (WSGI, JSON, TLS); but one written before a
    # number names the documents of a series ("PEP 484", "RFC 7230"), cited, not a thing
    numbered: Counter[str] = Counter()
    for i in prose:
        text = CODE_SPAN.sub(" ", sentences[i].text) if "`" in sentences[i].text else sentences[i].text
        for match in _ACRONYM.finditer(text):
            word = match.group(0)
            token = word_key(word)  # the key the words of a sentence get (a heading's "OPTIONS" is "option")
            if token not in STOPWORDS:
                code_counts[token] += 1
                surfaces.setdefault(token, word)
                if _NUMBER_AFTER.match(text, match.end()):
                    numbered[token] += 1
    for token, count in numbered.items():
        if count * 2 >= code_counts[token]:
            del code_counts[token]
    for token, count in code_counts.items():
        if count >= 2 and token not in signals:
            signal(token, CODE, surfaces[token])

    lead = _lead(doc, sentences, block_of)
    if not lead and doc.title_from and sentences:
        lead = [0]  # what it shows is the file it includes first: the page says so, with a link
    shown_code = _code_after(doc, sentences, block_of)
    description = doc.description or (None if lead else _release_span(doc))
    listed = None if doc.description else _terms_defined(sentences, lead, doc.title)
    if listed is not None:
        # a glossary or a reference that opens on its first entry: the lead says what it defines,
        # and that entry's definition is a key fact under its name, not the page's opening line
        description, lead = listed, []
    defaults = _defaults(sentences, doc, block_of)
    facts = _facts(sentences, lead, {d[2] for d in defaults}, doc.sections, doc.version, set(shown_code))
    kept_terms = {k: v for k, v in terms.items() if (k in signals or v >= 2 or k.count(" ") < 2) and not _generic(k)}
    # the bytes of key facts under each heading line, with the code each shows: what a page's
    # layout weighs where it splits into parts (offline_pages._weights), with no sentence read
    fact_bytes: dict[str, int] = {}
    term_heads: list[list[Any]] = []
    term_lines: dict[int, list[int]] = {}  # section -> the lines of its terms, in order
    for s in sentences:
        if s.kind == "term" and 0 <= s.section < len(doc.sections) and s.line not in term_lines.get(s.section, ()):
            term_heads.append([s.section, s.text, s.line])
            term_lines.setdefault(s.section, []).append(s.line)
    term_bytes: dict[str, int] = {}
    for i in facts:
        s = sentences[i]
        if 0 <= s.section < len(doc.sections):
            key = str(doc.sections[s.section].line)
            shown = shown_code.get(i)
            size = len(s.text) + 60 + (sum(len(line) + 3 for line in shown[0]) if shown else 0)
            fact_bytes[key] = fact_bytes.get(key, 0) + size
            lines = term_lines.get(s.section)
            at = bisect_right(lines, s.line) - 1 if lines else -1
            if lines and at >= 0:
                # on a part page a term's fact carries the term's name and a citation of the
                # source's path from two folders down: counted, so runs of terms fit their page
                term_bytes[str(lines[at])] = term_bytes.get(str(lines[at]), 0) + size + len(doc.path) \
                    + len(s.subject or "") + 12
    return SourceAnalysis(
        title=doc.title,
        format=doc.format,
        date=doc.date,
        date_line=_date_line(doc),
        anchor=doc.anchor,
        outline=[(b.level, b.text, b.line) for b in doc.blocks if b.kind == "heading"],
        lead=lead,
        facts=facts,
        terms=dict(sorted(kept_terms.items())),
        signals={k: signals[k] for k in sorted(signals) if k in kept_terms},
        sentences=sentences,
        warnings=list(doc.warnings),
        version=doc.version,
        description=description,
        sections=[[s.title, s.level, s.line, s.parent, s.version, s.date] for s in doc.sections],
        defaults=defaults,
        definitions={k: v for k, v in sorted(definitions.items()) if k in kept_terms},
        headed={k: v for k, v in sorted(headed.items()) if k in kept_terms},
        toc=[[e.target, e.title, e.line, e.group] for e in doc.toc],
        gist=_gist(description, [sentences[i] for i in lead]),
        code={str(i): code for i, code in shown_code.items() if i in facts},
        fact_bytes=fact_bytes,
        term_heads=term_heads,
        term_bytes=term_bytes,
        summary=lead,
        tokens=toks,
        claims=fact_record(doc, _plain_sentences(sentences)),
        named=doc.named,
        labels=[[name, line, title] for name, line, title in doc.labels],
        xrefs=[list(k) for k in dict.fromkeys(k for s in sentences if xref.OPEN in s.text for k in xref.references(s.text))],
        title_from=doc.title_from,
    )


GIST_CHARS = 200


def _gist(description: str | None, lead: list[Sentence]) -> str:
    """What the document is, in a line: its own description, else the first sentences of its lead,
    its cross-references as plain text (another document's page lists it, where they resolve to nothing)."""
    text = " ".join(xref.plain(description or " ".join(s.text for s in lead)).split())
    return text if len(text) <= GIST_CHARS else text[:GIST_CHARS].rsplit(" ", 1)[0] + "…"


SHORT_CODE_LINES = 2  # the code a sentence introduces ("... use the `list_templates` command:") that its fact shows
SHORT_CODE_CHARS = 120
# ... and the code a sentence says holds the defaults ("Using the defaults is equivalent to:",
# "it will be assumed to have the following backend settings:"): the defaults are in the code
DEFAULTS_CODE_LINES = 24
DEFAULTS_CODE_CHARS = 1_200
_DEFAULTS_INTRO = lazy(r"\bdefaults?\b|\bassumed\b|\bequivalent\s+to\b", re.I)
_PROMPT = ("$ ", "> ", ">>> ", "% ", "# ", "C:\\>")
# a tab's title above the code it shows ("tool.ini", "pyproject.toml", "Unix/macOS"): one short
# line, no sentence
_LABEL = lazy(r"[\w.()/+ -]{1,30}")


def _code_after(doc: Document, sentences: list[Sentence], block_of: list[int]) -> dict[int, list[Any]]:
    """The short code each sentence that introduces it is followed by: "These can be listed out
    using the `list_templates` command:" then `$ alembic list_templates`. A console session
    counts by its commands (the lines after a prompt), not its output; any other code only when
    it is short itself (SHORT_CODE_LINES, SHORT_CODE_CHARS), or holds what the sentence calls the
    defaults (DEFAULTS_CODE_LINES, DEFAULTS_CODE_CHARS). {sentence: [lines, the last line shown]}."""
    last_of: dict[int, int] = {}
    for i, block in enumerate(block_of):
        last_of[block] = i
    out: dict[int, list[Any]] = {}
    for index, i in last_of.items():
        s = sentences[i]
        if not s.text.endswith(":") or s.kind not in ("para", "item") or index + 1 >= len(doc.blocks):
            continue
        code = doc.blocks[index + 1]
        if code.kind == "para" and index + 2 < len(doc.blocks) and _LABEL.fullmatch(code.text.strip()) \
                and doc.blocks[index + 2].kind == "code":
            code = doc.blocks[index + 2]  # the first of the tabs showing it in one format each ("tool.ini")
        # the next block, within the lines a code directive and its options take (`.. code-block::
        # console`, a `:caption:`, the blank lines around them)
        if code.kind != "code" or code.line > max(s.line, s.end) + 6:
            continue
        lines = code.text.split("\n")
        filled = [(n, line.strip()) for n, line in enumerate(lines) if line.strip()]
        if filled and filled[0][1].startswith(_PROMPT):
            filled = [(n, line) for n, line in filled if line.startswith(_PROMPT)]
        most, chars = (DEFAULTS_CODE_LINES, DEFAULTS_CODE_CHARS) if _DEFAULTS_INTRO.search(s.text) else \
            (SHORT_CODE_LINES, SHORT_CODE_CHARS)
        if not filled or len(filled) > most or sum(len(line) for _, line in filled) > chars:
            continue
        out[i] = [[line for _, line in filled], code.line + filled[-1][0]]
    return out


def _date_line(doc: Document) -> int | None:
    """The line of the block near the top that states the document's date ("*November 3,
    2026*" under a release's title), so its page can cite it; None when the date comes from
    front matter or no block states it."""
    if not doc.date:
        return None

    for block in doc.blocks[:6]:
        if block.kind != "code" and find_date(block.text) == doc.date:
            return block.line
    return None


def _plain_sentences(sentences: list[Sentence]) -> list[Sentence]:
    """The sentences as they read without the rest of the set (facts are quoted as they stand)."""
    return [s if xref.OPEN not in s.text else Sentence(xref.plain(s.text), s.line, s.kind, s.section, s.subject,
                                                          s.version, s.end) for s in sentences]


def forget_sentences() -> None:
    """Drop what the analysis kept of sentences and phrases it saw (the daemon, after each batch)."""
    defined_term.cache_clear()
    _token_bits.cache_clear()


# a heading made of code spans only, with separators between them ("`-l`, `--line-length`",
# "`--fast` / `--safe`", "`ClientSession`")
# one identifier that only code writes so: with an underscore, a dot or "::" inside, or a
# call's "()"; not a word ("Overview", "FAQ"), nor a name in capitals inside ("JavaScript"),
# which prose writes too
_BARE_NAME = lazy(r"[A-Za-z_]\w*(?:(?:[_.]|::)\w+)+(?:\(\))?|[A-Za-z_]\w*\(\)")
# one identifier with a capital inside after a small letter or two capitals ("PlainTextReply",
# "JSONReply", "GZipFilter"): a class's name, or a word prose spells so ("GitHub")
_CAMEL_NAME = lazy(r"[A-Z][A-Za-z0-9]*(?:[a-z][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9]*")
_VERSION_LIKE = lazy(r"[vV]?\d+(?:\.\w+)*")
_CODE_HEADING = lazy(r"\s*``?[^`]+``?(?:\s*[,/|]?\s*``?[^`]+``?)*\s*")


def entry_names(title: str, as_code: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
    """The names a heading of code spans only stands for, as (key, surface): the names a
    reference entry describes; none for a heading with words beside its code ("Using `foo`")
    or code that names nothing (`x = 1`). A heading that is one identifier as code spells it,
    unmarked ("MAX_RETRIES", "Session.close()", "open_session()"), is such an entry too: a
    reference whose headings are its names need not mark them as code. A name in capitals inside
    ("JSONReply") is one only where `as_code(name)` says its section writes it as code (prose
    writes "JavaScript" too); without `as_code`, wherever it heads a section."""
    if "`" not in title:
        bare = title.strip()
        if (_BARE_NAME.fullmatch(bare) and not _VERSION_LIKE.fullmatch(bare) and _api_name(bare)) \
                or (_CAMEL_NAME.fullmatch(bare) and (as_code is None or as_code(bare))):
            key = code_token(bare)
            return [(key, f"`{bare}`")] if key else []
        return []
    if not _CODE_HEADING.fullmatch(title):
        return []
    out: list[tuple[str, str]] = []
    for match in CODE_SPAN.finditer(title):
        span = match.group(1).strip()
        for part in span.split(", "):  # "`-x, --skip-source-first-line`": two spellings, one span
            key = code_token(part) if _api_name(part) or _OPTION_NAME.fullmatch(part) else None
            if key and all(k != key for k, _ in out):
                out.append((key, f"`{part}`"))
    return out[:2]


def _written_as_code(blocks: Iterable[Any], name: str) -> bool:
    """Whether a section's own blocks write `name` as code: in a code span (`` `JSONReply` ``,
    `` `JSONReply(content)` ``) or in its code (``from pkg import JSONReply``)."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    for b in blocks:
        if b.kind == "code" and word.search(b.text):
            return True
        if "`" in b.text and any(word.match(span.group(1).strip()) for span in CODE_SPAN.finditer(b.text)):
            return True
    return False


def _looks_like_api(text: str) -> bool:
    """A term that is a name in code (`DEBUG`, `crypto/tls`, `url_for()`, `HashMap`), not a word."""
    if not _TERM_CHARS.fullmatch(text):
        return False
    camel = bool(_CAMEL_INSIDE.search(text))
    return (text.isupper() and len(text) > 1) or camel or any(c in text for c in "_./:(<")


def _api_name(span: str) -> bool:
    """A code span that names an API thing (a type, a function, a setting), not an expression
    or a value: `HashMap`, `Box<T>`, `url_for()`, `SECRET_KEY`; not `5`, `True`, `x + 1`."""
    if not _SPAN_CHARS.fullmatch(span):
        return False
    if _FILE_NAME_END.search(span):
        return False  # a file name
    bare = _PARAMETERS.sub("", span)
    if bare in ("True", "False", "None", "nil", "null", "true", "false", "Self", "self", "Ok", "Err", "Some"):
        return False
    # a plain lowercase identifier (`width`, `guess`) is an example's variable, not an API name
    return bare[:1].isupper() or "<" in span or "::" in span or "_" in bare or span.endswith(("()", "!")) \
        or "." in bare or "/" in bare


# (compiled once: _api_name is asked of every code span)
_TERM_CHARS = lazy(r"[\w.:/<>!-]+(?:\(\))?")
_CAMEL_INSIDE = lazy(r"[a-z][A-Z]")
_SPAN_CHARS = lazy(r"[A-Za-z_][\w:.<>, &'!\-]*(?:\(\))?")
_FILE_NAME_END = lazy(r"\.(rs|go|py|md|txt|toml|json|html|c|h|sh|cfg|ini|yaml|yml)$")
_PARAMETERS = lazy(r"<.*>|\(\)$")


_COMPOUND_FIRST = lazy(r"(?<![\w-])([A-Za-z][A-Za-z0-9]*)-(?=[A-Za-z])")
_ONE_NAME = lazy(r"[A-Za-z][A-Za-z0-9]*+(?:[-_.][A-Za-z0-9]++)++")


def _subject_keys(title: str, tf: Counter[str], *, min_tf: int, limit: int = 4) -> list[tuple[str, str, float]]:
    """The phrases a title names that its text talks about: (key, the title's spelling, how much
    the text says it), best first. Which of them is a concept is decided over the whole
    collection (offline_concepts)."""
    stripped = _TITLE_LEAD.sub("", title.strip())
    candidates = []
    families: Counter[str] | None = None
    # a title that is one hyphenated or dotted name ("cached-property", "markdown-it-py",
    # "pydantic_core") names one thing: "property", "py" and "core" are fragments of it
    title_tokens = tokens(stripped)
    whole = " ".join(title_tokens) if _ONE_NAME.fullmatch(stripped) else None
    modifiers = _modifiers(title_tokens)
    if whole is None and "-" in stripped:
        # "Free-threading Is Experimental" is about free-threading: the first word of a
        # hyphenated compound is a fragment of it, not a thing the title names alone
        modifiers |= {_fold(m.group(1)) for m in _COMPOUND_FIRST.finditer(stripped)} - set(
            _fold(w) for w in _COMPOUND_FIRST.sub(" ", stripped).split())
    keys = phrase_keys(title_tokens)
    for key in keys:
        if _generic(key) or (whole is not None and key != whole) or key in modifiers:
            continue
        if key in NAMED_THINGS and not _names_head(key, stripped):
            continue  # "Class-based Views", "Test Coverage": about views, about coverage
        count = tf.get(key, 0)
        if " " not in key and key.isalpha():
            # "Deploying to Production" is about what its text calls deploy and deployment too
            if families is None:
                families = _families(tf, {stem(k) for k in keys if " " not in k and k.isalpha()})
            count = max(count, families[stem(key)])
        if count < min_tf:
            continue
        candidates.append((count * (1.0 + 0.8 * key.count(" ")), key))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    _phrase_first(candidates, tf)
    return [(key, _surface(stripped, key), score) for score, key in candidates[:limit]]


_TITLE_PARTS = lazy(r"[,:;()\[\]/&|]|\s[-–—]\s")


def _names_head(word: str, title: str) -> bool:
    """Whether a title names `word` as what it is about, not as a word describing the next one:
    it ends the title or a part of it ("Functions", "Packages and Crates", "Basic Commands,
    Groups, Context", "Handling Application Errors", "Defining Modules to Control Scope"); not
    "Class-based Views" or "Test Coverage"."""
    for part in _TITLE_PARTS.split(title):
        toks = tokens(part)
        if any(token == word and (i + 1 == len(toks) or not is_content(toks[i + 1])) for i, token in enumerate(toks)):
            return True
    return False


PHRASE_SAID = 3  # times a title's phrase is said, at least, to be what the title names (_phrase_first)


def _phrase_first(candidates: list[tuple[float, str]], tf: Counter[str]) -> None:
    """A title that names a phrase its text keeps saying is about the phrase, not about a word of
    it: "The Request Context" about the request context, though "request" and "context" are
    each said three times as often (mostly of other things: the request, the application
    context); "Development Server", "Release Profiles", "Reference Cycles Can Leak Memory" alike.
    The first such phrase goes first when a single word leads: one said at least PHRASE_SAID
    times, and at least a quarter as often as the most said of its words that the title names."""
    if not candidates or " " in candidates[0][1]:
        return
    scores = {key: score for score, key in candidates if " " not in key}
    for at, (_score, key) in enumerate(candidates):
        if " " not in key:
            continue
        said = tf.get(key, 0)
        words = [scores[w] for w in key.split() if w in scores]
        if said >= PHRASE_SAID and words and said * 4 >= max(words):
            candidates.insert(0, candidates.pop(at))
            return


def _families(tf: Counter[str], roots: set[str]) -> Counter[str]:
    """How often the text says each word family of `roots` (stems): "deploy" counts deploying,
    deployed and deployment. A stem is its word's start (three letters or more, or the word
    itself), so only words that open with a root's first two letters are stemmed."""
    openings = {root[:2] for root in roots}
    families: Counter[str] = Counter()
    for other, n in tf.items():
        if other[:2] in openings and " " not in other and other.isalpha():
            root = stem(other)
            if root in roots:
                families[root] += n
    return families


def _modifiers(toks: list[str]) -> set[str]:
    """The describing words of a title that only modify the word after them: "external" in
    "Markup to shorten external links", "optional" in "Optional CLI Arguments", "global" in
    "Global substitutions". The title is about the phrase, or its last word, not
    about them alone. Only words that look like adjectives (a noun before a noun, "Request
    Context", "LaTeX customization", may well be what the title is about), and not before a
    generic word."""
    out: set[str] = set()
    heads: set[str] = set()
    for i, token in enumerate(toks):
        after = toks[i + 1] if i + 1 < len(toks) else None
        if after is not None and _DESCRIBING.search(token) and token not in _NOT_ADJECTIVAL and len(token) > 4 \
                and is_content(after) and after not in GENERIC and not _is_code(after):
            out.add(token)
        else:
            heads.add(token)
    return out - heads


_DESCRIBING = lazy(r"[a-z](?:al|ic|ive|ous|ful|less|able|ible|ed)$")


@lru_cache(maxsize=8192)  # asked of a sentence by analyze, then by its fact score (and by concept pages)
def defined_term(text: str) -> tuple[str, str, bool] | None:
    """A term the sentence defines: (key, surface, strong). Strong when the author marked it
    (emphasis, code, "called *X*"); plain "X is a ..." is weaker evidence."""
    return _defined_term(text, _called(text))


def _defined_term(text: str, called: re.Match[str] | None) -> tuple[str, str, bool] | None:
    """defined_term, given `called`: _called(text)."""
    if called and not _modifies_next(text, called.end()):
        term = called.group("term").strip()
        code = called.group(1) == "`"
        key = name_key(f"`{term}`") if code else name_key(term)
        if key:
            return key, (f"`{term}`" if code else term), True
    if not _DEFINES_VERB.search(text, text.lower()):
        return None  # most sentences: none of the verbs _DEFINES needs, between spaces
    match = _DEFINES.match(text)
    if not match:
        return None
    term = match.group("term").strip()
    mark = match.group("mark")
    if term.lower() in STOPWORDS or term.split()[0].lower() in ("it", "this", "that", "there", "which", "what", "here"):
        return None
    key = name_key(f"`{term}`") if mark == "`" else name_key(term)
    if not key:
        return None
    return key, (f"`{term}`" if mark == "`" else term), bool(mark)


_NEXT_WORD = lazy(r"\s+([a-z][a-z-]*)\b")


def _modifies_next(text: str, end: int) -> bool:
    """Whether a marked term ends before a noun it describes: "the so-called **global** dispatch"
    marks "global" as a kind of dispatch, not a thing called "global"."""
    after = _NEXT_WORD.match(text, end)
    if after is None:
        return False
    word = after.group(1)
    # a word in -s or -ed may be the sentence's verb ("a feature called *hooks* lets you")
    return word not in STOPWORDS and not word.endswith(("s", "ed")) and len(word) > 2


# (not cached: asked once of each key a document says, most of them said by no other document,
# it costs less than a cache's look-up and upkeep would)
def _generic(key: str) -> bool:
    words = key.split()
    if len(words) > 1 and words[-1] in _FILE_EXT:
        return True  # a file name such as src/lib.rs, not a concept
    return _SAYS_NOTHING.issuperset(words) or (len(words) == 1 and len(key) < 2)


_SAYS_NOTHING = GENERIC | STOPWORDS


_FILE_EXT = frozenset("rs go py md txt toml json html htm js ts c h sh yaml yml lock mod".split())


def _surface(text: str, key: str) -> str:
    """The text's own spelling of a folded key ("Lifetimes" for "lifetime", `Box<T>` for "box")."""
    for match in CODE_SPAN.finditer(text):
        if code_token(match.group(1)) == key:
            return match.group(0)
    words = list(_WORD.finditer(text))
    n = key.count(" ") + 1
    for i in range(len(words) - n + 1):
        run = words[i : i + n]
        if " ".join(_fold(w.group(0)) for w in run) == key:
            start, end = run[0].start(), run[-1].end()
            if text[end - 2 : end] in ("'s", "’s"):
                end -= 2  # "Contributor's Guide" names contributors, not "Contributor's"
            if text.count("`", start, end) % 2:  # a code span the run starts or ends inside: all of it
                if start > 0 and text[start - 1] == "`":
                    start -= 1
                elif end < len(text) and text[end] == "`":
                    end += 1
            return text[start:end]
    return key


# --- lead, facts, defaults ------------------------------------------------------------------------


def _usable(s: Sentence) -> bool:
    text = s.text
    return (
        s.kind in ("para", "item")
        and 25 <= len(text) <= 500
        and not _NOTE_LABEL.match(text)
        and not code_like(text)
        and "://" not in text[:40]
    )


LEAD_REACH = 50  # lines: a first paragraph further than this past an earlier note or list item is not the lead


def _lead(doc: Document, sentences: list[Sentence], block_of: list[int]) -> list[int]:
    """The document's own lead: the first real paragraph's first sentences (at most two, ~350
    characters); a description in the front matter is used by the page instead when given."""
    members: dict[int, list[int]] = {}
    for i, b in enumerate(block_of):
        members.setdefault(b, []).append(i)
    changelog = sum(1 for s in doc.sections if s.version) >= 2
    early: tuple[int, list[int]] | None = None  # the first note or list item, with its first sentence
    for index, block in enumerate(doc.blocks):
        if len(block.text) < 40 or index not in members:
            continue
        if changelog and release_of(doc.sections, sentences[members[index][0]].section):
            continue  # a changelog's lead is what comes before its releases, not one release's news
        if block.kind == "item" or (block.kind == "para" and _NOTE_LABEL.match(block.text)):
            first = sentences[members[index][0]]
            said = _NOTE_LABEL.sub("", first.text).lstrip(": ")  # a note's label is not its length or its words
            if early is None and _usable(replace(first, text=said)):
                early = (block.line, members[index][:1])
            continue
        if block.kind != "para":
            continue
        if early is not None and block.line - early[0] > LEAD_REACH:
            return early[1]  # the first paragraph is far into the document: what opens it says more
        if _is_toc_line(block.text, doc):
            continue  # a table of contents' titles run together ("Foreword Introduction") say nothing
        if block.text.rstrip().endswith(":") and len(block.text) < 120:
            continue  # "The rules are:" introduces a list; it is not the document's lead
        chosen: list[int] = []
        size = 0
        for i in members.get(index, []):
            if not _usable(sentences[i]):
                break
            if chosen and size + len(sentences[i].text) > 350:
                break
            chosen.append(i)
            size += len(sentences[i].text)
            if len(chosen) == 2:
                break
        if chosen:
            return chosen
    return []


TERMS_LISTED = 6  # the terms a lead that lists them names before "and N more"


def _terms_defined(sentences: list[Sentence], lead: list[int], title: str) -> str | None:
    """A lead for a document whose lead would be its first entry's definition, which does not
    say what the document is ("A class (inheriting from Builder) that takes parsed documents
    ...", the first sentence of a glossary): the terms it defines, in its order ("Defines 25
    terms: builder, configuration directory, ... and 19 more."). None for any other document,
    and for one whose first entry is what its title names (a module's page opening on the
    module's own description)."""
    if not lead:
        return None
    first = sentences[lead[0]]
    if not first.subject or says_name(title, first.subject, possessive=True):
        return None
    # each as a name: its markup dropped, a signature cut at its parameters ("getJSON(href, ...")
    terms = list(dict.fromkeys(name for s in sentences if s.kind == "term"
                               and (name := re.sub(r"[*`]", "", s.text).split("(")[0].strip())))
    if len(terms) < 3:
        return None
    shown = ", ".join(terms[:TERMS_LISTED])
    more = f" and {len(terms) - TERMS_LISTED} more" if len(terms) > TERMS_LISTED else ""
    return f"Defines {len(terms)} terms: {shown}{more}."


def _release_span(doc: Document) -> str | None:
    """What a changelog without a lead of its own holds: how many releases, the newest and the
    oldest, with their dates ("Release notes of 53 versions, newest first: ...")."""
    dates: dict[str, str | None] = {}
    for s in doc.sections:
        if s.version and s.version not in dates:
            dates[s.version] = s.date
    if len(dates) < 2:
        return None
    versions = list(dates)
    first, last = version_key(versions[0]), version_key(versions[-1])
    newest_first = first[0] == 0 or last[0] == 0 or first >= last  # a text that is no version: as written
    newest, oldest = (versions[0], versions[-1]) if newest_first else (versions[-1], versions[0])

    def told(v: str) -> str:
        return f"{v} ({dates[v]})" if dates[v] else v

    return (f"Release notes of {len(dates)} versions, {'newest' if newest_first else 'oldest'} first: "
            f"{told(newest)} back to {told(oldest)}.")


def _is_toc_line(text: str, doc: Document) -> bool:
    """A paragraph that only names pages: link titles one a line, no sentence among them (a book's
    SUMMARY.md with its "[Foreword](foreword.md)" lines, or any document that is a table of contents)."""
    if not doc.toc:
        return False
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    return len(lines) >= 2 and all(len(line) <= 80 and not re.search(r"[.!?:;]$", line) for line in lines)


FACTS_PER_SECTION = 6  # the answers one section keeps, at least (a long section keeps more)
FACTS_MOST = 300  # the most a document keeps: a page too long for them is split into parts by section
RECENT_RELEASES = 10  # the releases of a changelog, newest first, that keep a section's full share
OLDER_RELEASE_FACTS = 2  # what an older release's section keeps
OLDER_RELEASE_REMOVALS = 4  # and, besides, what it removed or dropped that it names
OLDER_RELEASE_REPLACED = 2  # and what it replaced ("now uses `style` instead of `align`")
TERM_FACTS = 3  # the answers a term a section defines keeps besides what it is (its first sentence), and one more for every 4 of its sentences


def _releases(sections: Sequence[Section]) -> frozenset[int]:
    """The sections that head a release (a topic of a release titled with a number, "Python 3.15
    Support" inside "Mypy 2.4", carries no version: sources.sections)."""
    return frozenset(j for j, section in enumerate(sections) if section.version)


def _older_releases(sections: Sequence[Section], releases: frozenset[int] | None = None) -> set[int]:
    """The sections of a changelog that head a release older than its RECENT_RELEASES newest."""
    ordered = sorted(_releases(sections) if releases is None else releases)
    if len(ordered) <= RECENT_RELEASES:
        return set()
    ranked = sorted(ordered, key=lambda j: (version_key(sections[j].version), sections[j].date or ""), reverse=True)
    older = set(ranked[RECENT_RELEASES:])
    # the release that opened the newest major series (4.0.0 when 4.4.0 is the newest) keeps its
    # share however many came after it: what it broke is what the current releases still are; so
    # do its pre-releases (4.0.0rc1), whose notes often list what the major version took away
    newest = parse_version(sections[ranked[0]].version)
    if newest is not None and newest.release[0] > 0:
        opening = [j for j in ranked if (v := parse_version(sections[j].version)) is not None
                   and v.release[0] == newest.release[0] and not any(v.release[1:])]
        older.difference_update(opening)
    return older


# an item that marks itself as breaking ("*Backwards-incompatible*: Rename ...", "**Breaking:** ...")
_BREAKING_PREFIX = BREAKING_PREFIX
_BREAKING_MARK = lazy("^" + _BREAKING_PREFIX, re.I)
# a statement of what a release changed: "X is now ...", "no longer", "has been removed", "Added ...",
# after a breaking mark too
_CHANGE = lazy(rf"^(?:{_BREAKING_PREFIX})?"
               r"(?:Added|Adds?|Removed|Removes?|Deprecated|Deprecates?|Dropped|Drops?|Renamed|Renames?|Changed|Changes?"
               r"|Replaced|Replaces?|Made|Makes?|Allows?|Allowed|Switch(?:ed|es)?|Migrated?|Migrates"
               # what a release changed in how it is built, shipped or run: "Move all package metadata
               # into `pyproject.toml`", "Stopped injecting `wheel` ...", "Strip `PYTHONPATH` from ...",
               # "Build and upload free-threaded wheels"
               r"|Moved?|Moves|Stop(?:ped|s)?|Strip(?:ped|s)?|Publish(?:ed|es)?|Build\s+and\s+(?:upload|publish))\b"
               r"|\b(?:now|no\s+longer|anymore|(?:has|have)\s+been|(?:is|are)\s+deprecated"
               r"|instead\s+of|by\s+default)\b", re.I)
# the sections of a release that say what it breaks or takes away (Keep a Changelog's "Removed",
# towncrier's "Backwards-incompatible Changes", "Breaking changes", "Deprecations")
_BREAKING = lazy(r"\b(?:incompatib\w*|breaking|removals?|removed|deprecations?|deprecated)\b", re.I)
# an instruction in place of what the sentence before took away: "Use the `lifespan` parameter instead."
_USE_INSTEAD = lazy(r"^(?:please\s+)?(?:use|call|pass|import|set|write)\b[^.;]{0,160}?\binstead\b", re.I)
# a statement that a release took something away: "Remove `x`", "Drop support for Python 3.7",
# "The `X` environment variable ... are removed", after an item's tag ("[env] Drop PyPy support (#1035)")
_REMOVAL = lazy(rf"^(?:\[[\w -]{{1,20}}\]\s*)?(?:{_BREAKING_PREFIX})?(?:{REMOVE_VERB})\b|{REMOVED_PASSIVE}", re.I)


# "now uses a `style` attribute instead of an `align` attribute": one named thing replaces another
_REPLACED = lazy(r"`[^`]+`[^.;`]{0,60}\binstead\s+of\b[^.;`]{0,20}`[^`]+`", re.I)
# "Replace `docid` implicit primary key on legacy `Index` with `rowid`"
_REPLACE_WITH = lazy(r"\breplace[sd]?\s+(?:the\s+)?`[^`]+`[^.;]{0,60}?\swith\s+(?:the\s+)?`[^`]+`", re.I)


def _removes(text: str) -> bool:
    """Whether a changelog's sentence says a release removed a thing it names (code, a version)."""
    return ("`" in text or _DIGIT.search(text) is not None) and ("emov" in text or "rop" in text) \
        and _REMOVAL.search(text) is not None


# "Coq renamed to Rocq", "`foo` was renamed to `bar`", "Rename `x` option to `y`": a name replaced
# "`close_all()` renamed to `close_idle()`", "`close_all()` method renamed to ...": the kind of thing may come between
_RENAMED_TO = lazy(r"(?:`[^`]+`|\b[A-Z][\w.+-]*)(?:\s+(?i:method|function|class|option|setting|argument|parameter|"
                   r"attribute|property|field|module|command|flag|hook|decorator|key|variable|signal|event))?"
                   r"\s+(?:(?:is|was|has\s+been)\s+)?(?i:renamed)\s+(?:to|as)\s+"
                   r"(?:`[^`]+`|[A-Z][\w.+-]*)"
                   r"|\b(?i:rename[ds]?)\s+(?:the\s+)?(?:`[^`]+`|[A-Z][\w.+-]*)[^.;`]{0,30}?\s+to\s+(?:`[^`]+`|[A-Z][\w.+-]*)")


def _replaces(text: str) -> bool:
    """Whether a changelog's sentence says a release replaced one named thing with another."""
    return ("nstead" in text and _REPLACED.search(text) is not None) or ("ename" in text and _RENAMED_TO.search(text) is not None) \
        or ("eplace" in text and _REPLACE_WITH.search(text) is not None)


def _release_kinds(sections: Sequence[Section], releases: frozenset[int], older: set[int]) -> tuple[set[int], set[int]]:
    """The sections of a changelog that say what a release breaks or removes, and the sections
    of its newest RECENT_RELEASES releases (each release's own section and the ones in it).
    `releases`: _releases(sections); `older`: _older_releases of them."""
    if not releases:
        return set(), set()
    breaking: set[int] = set()
    recent: set[int] = set()
    for j, section in enumerate(sections):
        release = _release_section(j, sections, releases)
        if release < 0:
            continue
        if release not in older:
            recent.add(j)
        if j != release and _BREAKING.search(section.title):
            breaking.add(j)
    return breaking, recent


def _release_section(index: int, sections: Sequence[Section], releases: frozenset[int]) -> int:
    """The section heading the release a section sits in (itself, or the nearest one above), or -1.
    `releases`: _releases(sections)."""
    seen = 0
    while 0 <= index < len(sections) and seen < 64:
        if index in releases:
            return index
        index = sections[index].parent
        seen += 1
    return -1


def _facts(sentences: list[Sentence], lead: list[int], shown_as_defaults: set[int],
           sections: Sequence[Section] = (), own: str | None = None, introducing: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """The sentences a reader asks for: definitions, defaults, requirements and limits, numbers
    with their subject, the rules a list states. Ranked, then shown in document order.

    Every section keeps its own (a reference's hundred settings each keep what they say of
    themselves, not the document's top 25): the sentences that state a version, a number with
    its unit, a default, a requirement or a name the document introduces (`_answers`), and the
    first sentence of a section named for one term (what that setting or function is), however
    little else they say; then, up to a section's share, the others that say most. A page too
    long for them is split into parts along its sections (offline_pages.split_outline).

    A fact comes with what it needs to be read alone: a sentence that refers back ("This
    practice ...") with the sentence before it; a sentence that introduces a short list ("as
    follows:") with the list's items (with a long list it is left out: it says nothing alone);
    a statement of what used to be ("In previous releases the maximum was 65535") with the next
    sentence when that one says what is now."""
    scores: dict[int, float] = {}
    skip = set(lead) | shown_as_defaults
    seen: set[tuple[str, str | None]] = set()
    runs = _item_runs(sentences)
    opening = _section_openings(sentences, sections)
    weighed: dict[int, tuple[float | None, bool, bool]] = {}

    def weigh(i: int) -> tuple[float | None, bool, bool]:
        if i not in weighed:
            weighed[i] = _weigh(sentences, i, runs, own)
        return weighed[i]

    # what a defined term is or does ranks above what its version notes say of it
    defining = _term_openings(sentences, weigh)
    releases = _releases(sections)
    older = _older_releases(sections, releases)
    breaking, recent = _release_kinds(sections, releases, older)
    top = max(releases, key=lambda j: (version_key(sections[j].version), sections[j].date or "", -j)) if releases else -1
    newest = {j for j in recent if _release_section(j, sections, releases) == top}
    answers: set[int] = set()
    listed: set[int] = set()  # answers only as items of the newest release's lists
    replaced: set[int] = set()  # answers for what a release replaced
    removal: set[int] = set()  # what a release took away ("Remove `on_startup()` ...")
    for i, s in enumerate(sentences):
        if s.kind not in ("para", "item", "table") or i in skip or (s.text, s.subject) in seen:
            continue
        seen.add((s.text, s.subject))
        score, answer, _ = weigh(i)
        if score is None:
            continue
        if i in defining and score >= 0:
            score += 4  # what a term the document defines (an option, a glossary entry) is
            answers.add(i)
        elif i in opening and score >= 0:
            score += 2  # what the setting or function a section is named for is
            answers.add(i)
        elif answer or (i in introducing and score >= -1):
            answers.add(i)  # ... or how to do it: a sentence and the short command it introduces
        elif score >= 0 and (s.section in recent or s.section in breaking or _BREAKING_MARK.match(s.text)) \
                and _CHANGE.search(s.text):
            answers.add(i)  # what a recent release, or any release's breaking changes, changed
        elif score >= 0 and s.section in newest and s.kind == "item":
            # each item of the newest release's lists is a change too ("Support automatic links
            # with other URL schemes", "Fix ..."): it fills what its section's share leaves
            answers.add(i)
            listed.add(i)
        if releases and score >= 0 and s.kind == "item" and _removes(s.text):
            answers.add(i)  # a thing a release took away, which a reader still runs into
            removal.add(i)
        if (s.section in breaking or (releases and _BREAKING_MARK.match(s.text))) and score >= 0:
            score += 2  # an older release keeps what it broke before what it fixed
        elif releases and score >= 0 and _removes(s.text):
            score += 1  # ... and what it took away, after what it marks as breaking
        elif releases and score >= 0 and _replaces(s.text):
            score += 1  # ... and what it replaced, which a reader still runs into
            answers.add(i)
            replaced.add(i)
        if score >= 1 or i in answers:
            scores[i] = score
    limit = min(25, 5 + len(sentences) // 20)
    # a short note's figures are its facts; a long document keeps what says most, and fills
    # what room is left with its next best (a figure, a requirement), never with chatter
    strong = sorted((i for i in scores if scores[i] >= 2.5 or len(sentences) < 30), key=lambda i: (-scores[i], i))
    strong_set = set(strong)
    weak = sorted((i for i in scores if i not in strong_set and scores[i] >= 1 and weigh(i)[2]),
                  key=lambda i: (-scores[i], i))
    others = (strong + weak[: max(0, limit // 2 - len(strong))])[:limit]
    # the answers of each section, up to its share (a long section a larger one), best first; in
    # a changelog, a release older than its newest RECENT_RELEASES keeps its few best (what it
    # dropped or now requires, which a timeline also follows)
    size: Counter[Any] = Counter(s.section for s in sentences if s.kind in ("para", "item", "table"))
    size.update((s.section, s.subject) for s in sentences if s.subject and s.kind in ("para", "item", "table"))
    taken: Counter[Any] = Counter()
    kept: list[int] = []
    # a changelog's newest releases first: the document's cap (FACTS_MOST) falls on its oldest
    for i in sorted(answers & scores.keys(), key=lambda i: (bool(recent) and sentences[i].section not in recent,
                                                            i in listed, -scores[i], i)):
        if i in defining:
            kept.append(i)  # what each term is: never crowded out by its section's other answers
            continue
        section = sentences[i].section
        release = _release_section(section, sections, releases) if older else -1
        slot: Any = section  # whose share the sentence takes
        if release in older and _removes(sentences[i].text):
            # what it took away, which a reader still runs into, has a share of its own
            slot, share = (release, "removed"), OLDER_RELEASE_REMOVALS
        elif release in older and i in replaced:
            slot, share = (release, "replaced"), OLDER_RELEASE_REPLACED  # beside what it removed, not in its place
        elif release in older:
            slot, share = release, OLDER_RELEASE_FACTS  # the release's share, whatever its sub-sections
        elif i in removal:
            kept.append(i)  # each thing a release took away, which a reader still runs into: none crowded out
            continue
        else:
            share = FACTS_PER_SECTION + size[section] // 8
            term = (section, sentences[i].subject)
            if sentences[i].subject and taken[term] < TERM_FACTS + size[term] // 4:
                # a term the section defines (one of a reference's eighty settings) has a share of
                # its own, what it says of itself never crowded out by the other terms' answers;
                # past it, its answers compete for the section's share as before
                taken[term] += 1
                kept.append(i)
                continue
        if taken[slot] < share:
            taken[slot] += 1
            kept.append(i)
    # the others fill what room the answers leave of the document's share, best first
    kept = kept[:FACTS_MOST]
    answered = set(kept)
    chosen = answered | set([i for i in others if i not in answered][: max(0, limit - len(kept))])
    for i in sorted(chosen):
        s = sentences[i]
        if (REFERS_BACK.match(s.text) or _USE_INSTEAD.match(s.text)) and i > 0 \
                and sentences[i - 1].kind in ("para", "item") and sentences[i - 1].line >= s.line - 3:
            # "This practice ..." comes with the sentence it refers to, "Use `x` instead." with
            # what it replaces ("Remove `on_event()`.")
            chosen.add(i - 1)
        if s.text.endswith(":") and s.kind == "para":
            items = _items_after(sentences, i)
            if items and len(items) <= 6:
                chosen.update(items)
            elif i not in answered:
                chosen.discard(i)  # "in the following order:" without its list says nothing (an answer says something)
        if _was(s.text) and i + 1 < len(sentences):
            after = sentences[i + 1]
            if after.section == s.section and after.line <= s.line + 4 and _NOW.search(after.text) \
                    and after.kind in ("para", "item") and len(after.text) <= 400:
                chosen.add(i + 1)
    return sorted(chosen)


# a section named for one term in code: a setting, an option, a function ("FILE_UPLOAD_MAX_MEMORY_SIZE",
# "--keyring-provider", "``max_retries``", "Task.default_retry_delay()", "DEBUG"); not a word
# ("Dependencies", "Bugs"), whose section's first sentence says no more than any other
_ONE_TERM = lazy(r"[`*]*[\w.:/-]*\w[\w.:/-]*(?:\(\))?[`*]*")
_CODE_TERM = lazy(r"`|\w[_.:/(-]\w?|^-|^[A-Z][A-Z0-9]+$|[a-z][A-Z]")


def _section_openings(sentences: list[Sentence], sections: Sequence[Section]) -> set[int]:
    """The first prose sentence of each section whose title is one term, the sentence that says
    what that term is ("The maximum size (in bytes) that an upload will be before it gets
    streamed to the file system."); and of each section that answers a question (titled with
    one, or "Answer", "Solution", "Workaround"), the first of its first three that reads alone:
    the answer, after "This is not a bug." """
    named = {j for j, section in enumerate(sections)
             if not section.version and _ONE_TERM.fullmatch(section.title.strip())
             and _CODE_TERM.search(section.title.strip())}
    asked = {j for j, section in enumerate(sections) if not section.version and _ASKED.search(section.title.strip())}
    out: set[int] = set()
    tried: Counter[int] = Counter()  # prose sentences looked at, per section
    done: set[int] = set()  # sections whose opening is found
    for i, s in enumerate(sentences):
        if s.kind not in ("para", "item") or s.section in done or (s.section not in named and s.section not in asked):
            continue
        tried[s.section] += 1
        if tried[s.section] > (3 if s.section in asked else 1):
            continue
        if _full_sentence(s.text) and not REFERS_BACK.match(s.text) and not CHATTY.match(s.text):
            out.add(i)
            done.add(s.section)
    return out


# a section that answers a question: titled with the question, or as its answer
_ASKED = lazy(r"\?$|^(?:answer|solution|workaround|resolution|explanation)s?$", re.I)


_VERSION_NOTE = lazy(r"(?:Changed|New|Added|Deprecated|Removed)\s+(?:in|since)\s+version\b", re.I)


def _term_openings(sentences: list[Sentence], weigh: Callable[[int], tuple[float | None, bool, bool]]) -> set[int]:
    """The sentence that says what each term the document defines is or does (a glossary's
    entry, an API description's `.. option:: -j N`, a definition list's term): the first of its
    first two prose sentences that reads alone ("Distribute the build over N processes in
    parallel"; after "Only applies if the task calls `self.retry`.", "The maximum number of
    attempted retries before giving up."); a version note under it ("Changed in version 1.7:
    ...") says when, not what. `weigh(i)`: _weigh of sentence i, as _facts reads it (and keeps)."""
    out: set[int] = set()
    tried: Counter[str] = Counter()
    done: set[str] = set()
    for i, s in enumerate(sentences):
        if not s.subject or s.subject in done or s.kind not in ("para", "item") or _VERSION_NOTE.match(s.text):
            continue
        tried[s.subject] += 1
        if tried[s.subject] >= 2:
            done.add(s.subject)
        score = weigh(i)[0] if _full_sentence(s.text) and not REFERS_BACK.match(s.text) \
            and not CHATTY.match(s.text) else None
        if score is not None and score >= 0:
            out.add(i)
            done.add(s.subject)
    return out


# what people ask a document about: a version ("3.10 and above", "as of version 2.0.0"), a number
# with its unit ("1 hour", "a three minute delay", "100 characters"), a default, a requirement, a
# name the document introduces (an environment variable, a term it defines or calls so)
_VERSION_STATED = lazy(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?![\w.]*\d)|\bversion\s+\d")
_UNIT = (r"(?:%|ms|milliseconds?|s|secs?|seconds?|minutes?|mins?|hours?|days?|weeks?|months?|years?|"
         r"[KMGT]i?B|bytes?|bits?|characters?|chars|lines?|items?|entries|connections?|requests?|messages?|"
         r"processes|threads|workers?|times|retries|attempts|x)")
_NUMBER_UNIT = lazy(r"(?<![\w.])\d+(?:[.,]\d+)*\s*-?\s*" + _UNIT + r"\b|\b(?:one|two|three|four|five|six|seven|"
                    r"eight|nine|ten|twelve|fifteen|twenty|thirty|sixty|hundred|thousand)[\s-]+" + _UNIT + r"\b",
                    re.IGNORECASE)
# a requirement or a limit stated outright ("must", "at least"); not the softer words a fact's score
# also counts ("only", "supports", "compatible")
_REQUIREMENT = lazy(r"\b(?:requires?|required|must|minimum|maximum|at\s+least|at\s+most|"
                    r"no\s+(?:more|less|later|earlier)\s+than|deprecated|no\s+longer|drop(?:s|ped)?\s+support)\b")
# a list item that is a field and its value: a short name (with a number or a name in code), a
# colon, what it is
_FIELD_ITEM = lazy(r"(?=[^:]{0,40}(?:\d|`))[^:\n]{1,40}:\s+\S")
# a figure named before its number ("uses port 5000", "a timeout of 30", "level 2"), on lowercased text
_NAMED_NUMBER = lazy(r"\b(?:port|limit|timeout|threshold|depth|level|priority|size|length|width|height)\s+"
                     r"(?:of\s+|is\s+|=\s*)?\d")
_NUMBER_UNIT_LOW = lazy(_NUMBER_UNIT.pattern.replace("[KMGT]i?B", "[kmgt]i?b"))  # on lowercased text
_SPELLED = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "fifteen",
            "twenty", "thirty", "sixty", "hundred", "thousand")
_REQUIREMENT_WORDS = ("requir", "must", "minimum", "maximum", "at least", "at most", "than", "deprecated", "no longer",
                      "support")
_KIND_WORDS = ("command", "option", "flag", "switch", "setting", "config", "context manager", "hook", "variable", "parameter",
               "argument",
               "directive", "signal", "fixture", "marker", "constant", "decorator")
# how to do something with the code that does it, an answer to "how do I ...": "the correct way
# to get X is to set `Y`", "To turn it off, pass `check=False`", "if you pass `order=True`, it
# also creates ...", "Use `0` to close connections at the end of each request" (only where the
# sentence names code)
_HOW_TO_WAY = r"\b(?:way|how)[*_]*\s+to\b[^.;]{0,80}?\bis\s+to\s+\w+"
_HOW_TO_TO = r"^to\s+\w+[^.;]{0,80}?,\s*(?:set|use|pass|call|add|run|give|write)\b"
_HOW_TO_IF_YOU = r"\b(?:if|when|unless)\s+you\s+(?:pass|set|use|give|specify|enable|disable|add)\b"
_HOW_TO_USE = r"\b(?:use|pass|set\s+(?:it|this|them)\s+to)\s+`[^`]+`\s+(?:to|for)\s|^set\s+`[^`]+`\s+(?:when|if|to|for)\s"
_HOW_TO_YOU_CAN = r"\byou\s+can\s+[a-z]{3,}\b[^.;]{0,80}?\b(?:using|with)\s+(?:the\s+|a\s+)?`[^`]+`"
_HOW_TO_CAN_BE = (r"\bcan\s+be\s+[a-z]+(?:ed|en)\b[^.;]{0,60}?\bby\s+(?:adding|passing|setting|using|calling|giving|"
                  r"specifying|writing|defining|overriding|providing|enabling|disabling|registering|changing)\b")
_HOW_TO_YOU = (r"\byou\s+can\s+use\b(?:`[^`]*`|[^.;`]){0,80}?\bto\s+(?:explicitly\s+)?[a-z]{3,}|"
               r"`[^`]+`[^.;`]{0,40}?\b(?:lets|allows)\s+you\s+(?:to\s+)?[a-z]{3,}|"
               r"^if\s+you\s+(?:want|need|wish)\s+to\b[^.;]{0,120}?\buse\b")
_HOW_TO = lazy("|".join((_HOW_TO_WAY, _HOW_TO_TO, _HOW_TO_IF_YOU, _HOW_TO_USE, _HOW_TO_YOU_CAN, _HOW_TO_CAN_BE,
                               _HOW_TO_YOU)), re.I)
# _HOW_TO's alternatives grouped by a word each of their matches holds: a group is searched for
# only where its word is (_how_to), not all ten alternatives wherever one of the words is
_HOW_TO_PARTS = (
    (("way", "how"), CaseBlind(lazy(_HOW_TO_WAY, re.I))),
    (("to",), CaseBlind(lazy(_HOW_TO_TO, re.I))),
    (("you",), CaseBlind(lazy("|".join((_HOW_TO_IF_YOU, _HOW_TO_YOU_CAN, _HOW_TO_YOU)), re.I))),
    (("use", "pass", "set"), CaseBlind(lazy(_HOW_TO_USE, re.I))),
    (("can",), CaseBlind(lazy(_HOW_TO_CAN_BE, re.I))),
)


def _how_to(text: str, low: str) -> bool:
    """Whether _HOW_TO matches `text` (`low`: text.lower())."""
    for words, part in _HOW_TO_PARTS:
        if may_hold(text, low, words) and part.search(text, low):
            return True
    return False
# what a name may be, how a thing must be named, what an abbreviation stands for: "Possible
# values for `scope` are: ...", "Each file should be named like `<ISSUE>.<TYPE>.rst`", "DBAPI
# is shorthand for ..." (the first two only where the sentence names code)
_VALUES_OR_NAMING = CaseBlind(lazy(r"\b(?:possible|valid|allowed|accepted|supported|available)\s+(?:values|options|choices)\s+"
                                   r"(?:for|of)\b|\b(?:should|must|shall)\s+be\s+named\b", re.I))
_HOW_TO_WORDS = ("way", "how", "you", "use", "pass", "set", "can be")  # every match of _HOW_TO holds one, or starts with "to"
_VALUES_OR_NAMING_WORDS = ("values", "options", "choices", "named")
_STANDS_FOR_WORDS = ("short", "stands", "abbreviation", "acronym")
_STANDS_FOR = CaseBlind(lazy(r"\bis\s+(?:short|shorthand)\s+for\b|\bstands\s+for\b|\bis\s+an?\s+(?:abbreviation|acronym)\s+(?:of|for)\b",
                             re.I))
# what a reader asks a document and it answers in one sentence, with no figure or name: the way
# it recommends ("The simplest way is to use ..."), where something does not work ("On Windows,
# this setting has no effect", "does not work in forking environments", "will only start ... in
# major releases"), what is used when nothing is given ("If `:tag` is omitted, the `latest`
# tag will be used"), an order things are tried in ("in this order: a, b, c"), a
# change a migration asks for ("will need to be changed to ..."), and a list it counts ("works
# in three phases:")
_BEST_WAY = CaseBlind(lazy(r"\b(?:simplest|easiest|best|recommended|preferred|quickest|safest)\s+way\b[^.;]{0,60}?"
                           r"\bis\s+(?:to|with|by)\b", re.I))
_LIMITATION = CaseBlind(lazy(r"\bhas\s+no\s+effect\b|\b(?:is|are)\s+(?:silently\s+)?ignored\b|\bonly\s+(?:works|available|"
                             r"registered|supported|applies|enabled)\s+(?:on|in|with|to|when|for)\b|\bnot\s+(?:available|supported)\s+on\b"
                             r"|\b(?:will|can|may|must|shall)\s+only\s+(?:be\s+)?[a-z]{3,}"
                             r"|\b(?:does|do|will)\s+not\s+(?:work\s+(?:in|on|with|when|for|under)|support)\b|\b(?:is|are)\s+not\s+supported\b"
                             r"|\b(?:omitted|not\s+(?:given|specified|set|provided|passed)|unset)\b[^.;]{0,60}?\b(?:is|are|will\s+be)\s+used\b"
                             # two options that do not go together: "`--report` cannot be combined with `--metadata`",
                             # "You cannot combine X with Y", "X and Y are mutually exclusive"
                             r"|\b(?:cannot|can\s*not|can't|may\s+not|must\s+not)\s+(?:be\s+)?(?:combined|used\s+(?:together|with)|mixed|combine)\b"
                             r"|\bmutually\s+exclusive\b",
                             re.I))
# what to use in place of something ("Use Rich instead."), and the months or weekdays a thing
# happens in ("Our release months are January, April, July, October.")
_INSTEAD = CaseBlind(lazy(r"\b(?:use|prefer|switch\s+to|migrate\s+to)\s+\S.{0,60}?\binstead\b", re.I))
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
                "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = lazy(r"\b(?:" + "|".join(_MONTH_NAMES) + r")\b")
# a name of them anywhere, a test before _MONTHS (a search skips to the capitals they start with)
_MONTH_NAME = lazy("|".join(_MONTH_NAMES))
_IN_ORDER = CaseBlind(lazy(r"\bin\s+(?:this|that|the\s+following)\s+order\b|\border\s+of\s+precedence\b", re.I))
# which of two steps comes first ("Converters are run *before* validators"), what a function in code
# returns ("`inspect(cls)` returns the parameters used to build the class")
_BEFORE_AFTER = CaseBlind(lazy(r"\b(?:is|are)\s+(?:always\s+)?(?:run|called|applied|executed|evaluated|processed|invoked)\s+"
                               r"[*_]*(?:before|after)\b", re.I))
_RETURNS = lazy(r"^`[^`]{1,80}`\s+(?:returns|yields)\b")
_MIGRATE = CaseBlind(lazy(r"\b(?:need|needs|have|has)\s+to\s+be\s+(?:changed|updated|renamed|replaced|rewritten|adjusted)\b", re.I))
_COUNTED_LIST = CaseBlind(lazy(r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*s\b"
                               r"[^.;]{0,40}:$", re.I))
_NAME_INTRODUCED = lazy(r"(?<![\w.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w.])")  # an environment variable, a setting
# a name in code with the kind of thing it is beside it, of the kinds a reader sets or runs: "the
# `alembic check` command", "the `--sql` option", "the `capture_logs()` context manager", "option
# `--tab-width`" (not every function or class a tutorial mentions on its way)
_KINDS_OF_NAMES = (r"(?:command|subcommand|option|flag|switch|setting|config(?:uration)?\s+(?:key|value|option)|parameter|"
                   r"(?:keyword\s+)?argument|"
                   r"context\s+manager|hook|environment\s+variable|directive|signal|fixture|marker|constant|"
                   r"decorator)s?")
# ... a name in code or emphasis ("the *field_transformer* hook"), or in capitals ("the TERM signal")
_NAME_MARKED = r"(?:`[^`\n]{2,60}`|\*[^*\n]{2,40}\*)"
_NAMED_KIND = lazy(_NAME_MARKED + r"\s+" + _KINDS_OF_NAMES + r"\b|\b" + _KINDS_OF_NAMES + r":?\s+" + _NAME_MARKED
                   + r"|(?<![\w.])(?-i:[A-Z][A-Z0-9_]{2,})\s+(?:signal|setting|flag|constant|option|variable)s?\b",
                   re.IGNORECASE)
# _NAMED_KIND in its two parts (_named_kind): a marked name, asked only of a text with a mark and
# in lowercase; a name in capitals, opening on its first capital, which it then looks behind
_NAMED_KIND_MARKED = CaseBlind(lazy(_NAME_MARKED + r"\s+" + _KINDS_OF_NAMES + r"\b|\b" + _KINDS_OF_NAMES + r":?\s+"
                                    + _NAME_MARKED, re.IGNORECASE))
_NAMED_KIND_CAPITALS = lazy(r"[A-Z](?<![\w.][A-Z])[A-Z0-9_]{2,}\s+(?i:(?:signal|setting|flag|constant|option|variable)s?)\b")


def _may_name_kind(text: str) -> bool:
    """Whether a text has what each match of _NAMED_KIND needs: a mark (code, emphasis) or three capitals in a row."""
    return "`" in text or "*" in text or _CAPITALS.search(text) is not None


_CAPITALS = lazy(r"[A-Z][A-Z0-9_]{2}")


def _named_kind(text: str, low: str) -> bool:
    """Whether _NAMED_KIND matches `text` (`low`: text.lower())."""
    return (("`" in text or "*" in text) and _NAMED_KIND_MARKED.search(text, low)) \
        or _NAMED_KIND_CAPITALS.search(text) is not None


def _answers(s: Sentence, own: str | None = None) -> bool:
    """A sentence that states what people ask for, whatever else it says: a version (not only
    the document's `own`: a release's notes name their release in every other sentence), a
    number with its unit, a default, a requirement, or a name the document introduces (a
    sentence alone: _weigh works it out with the score, for the sentences of a document)."""
    return _weigh([s], 0, {0: (0, 0)}, own)[1]


_WAS = CaseBlind(lazy(r"\b(?:previous(?:ly)?|formerly|earlier|used\s+to|prior\s+to|until\s+now|in\s+the\s+past)\b",
                      re.IGNORECASE))
_WAS_WORDS = ("previous", "formerly", "earlier", "used", "prior", "until", "past")  # one in each match of _WAS


def _was(text: str) -> bool:
    """_WAS.search, looked for only where one of its words is (most sentences have none)."""
    low = text.lower()
    return may_hold(text, low, _WAS_WORDS) and _WAS.search(text, low)
_NOW = lazy(r"\bnow\b|\bnew\b|\binstead\b", re.IGNORECASE)
# an acronym spelled out where it is introduced: "Resource Acquisition Is Initialization (RAII)"
_ACRONYM_NEAR = lazy(r"[\w-]\s*\([A-Z][A-Za-z]?[A-Z0-9]")
_ACRONYM_OPENS = lazy(r"\([A-Z][A-Za-z]?[A-Z0-9]")  # in each match of _ACRONYM_NEAR
_EXPANSION = lazy(r"((?:[A-Za-z][\w-]*\s+){1,7}[A-Za-z][\w-]*)\s*\(([A-Z][A-Za-z]?[A-Z0-9]{1,7}s?)\)")


def _expands_acronym(text: str) -> bool:
    # the full pattern backtracks over every word run; _ACRONYM_NEAR tries every character, so
    # its bracket and capitals come first (a search skips from bracket to bracket)
    if "(" not in text or not _ACRONYM_OPENS.search(text) or not _ACRONYM_NEAR.search(text):
        return False
    for match in _EXPANSION.finditer(text):
        acronym = match.group(2).rstrip("s").upper()
        words = match.group(1).split()
        for n in range(len(acronym) - 1, min(len(words), len(acronym) + 3) + 1):
            tail = words[-n:] if n else []
            initials = "".join(w[0] for w in tail if w[0].isupper() or len(w) > 3).upper()
            if initials == acronym or "".join(w[0] for w in tail).upper() == acronym:
                return True
    return False


def _introduces_name(called: re.Match[str] | None) -> bool:
    """"called *X*", "known as X" (a match of _CALLED): a name introduced; not "the variable
    named `second`"."""
    return called is not None and (called.group(1) != "`" or _api_name(called.group("term")))


def _items_after(sentences: list[Sentence], i: int) -> list[int]:
    """The items of the list that sentence i introduces (its first item is the next sentence)."""
    out: list[int] = []
    j = i + 1
    while j < len(sentences) and sentences[j].kind == "item" and len(out) < 40:
        out.append(j)
        j += 1
    return out


def _item_runs(sentences: list[Sentence]) -> dict[int, tuple[int, int]]:
    """The first and last sentence of the run of list items each item is in, in one pass (each
    item walking its run took a changelog of a thousand items a million steps)."""
    runs: dict[int, tuple[int, int]] = {}
    i = 0
    while i < len(sentences):
        if sentences[i].kind != "item":
            i += 1
            continue
        last = i
        while last + 1 < len(sentences) and sentences[last + 1].kind == "item":
            last += 1
        runs.update((j, (i, last)) for j in range(i, last + 1))
        i = last + 1
    return runs


def _fact_score(sentences: list[Sentence], i: int, runs: dict[int, tuple[int, int]] | None = None) -> float | None:
    """How much a sentence answers what a reader asks of the document; None when it cannot be a
    fact at all (too short or long, code). `runs`: _item_runs of the sentences, when known."""
    return _weigh(sentences, i, runs)[0]


def _weigh(sentences: list[Sentence], i: int, runs: dict[int, tuple[int, int]] | None = None,
           own: str | None = None) -> tuple[float | None, bool, bool]:
    """_fact_score, whether the sentence is one of the answers people ask for (_answers), and
    whether it states a figure or a requirement as a fact (not as a story), worked out from the
    same reading of it."""
    s = sentences[i]
    text = s.text
    low = text.lower()  # the case-blind patterns run on it (and only where their words are)
    # a short sentence is kept only where it gives a default ("The default is 88."); a long one
    # only where it is an API's signature, which a reference shows whole
    if not ((20 if "default" not in low else 12) <= len(text) <= (400 if not text.startswith(SIGNATURE) else 1_200)) \
            or code_like(text) or (len(text) < 20 and _DEFAULT_HEADER.match(text.replace(":", "").strip()) is not None):
        return None, False, False
    plain, plain_low = _plain(text, low)
    score = 0.0
    called = _called(text)
    defined = defined_term(text)  # analyze asked it of every paragraph and item: kept
    if defined and called and called.group(1) == "`" and not _api_name(called.group("term")):
        defined = None  # "the variable named `second`" names an example's variable, not a thing
    introduced = bool(defined) or _introduces_name(called) or _expands_acronym(text)
    if introduced:
        score += 3  # a name defined or introduced, even one too long to be a concept ("called *Resource ... (RAII)*")
    says_default = _says_default(text, low)
    if says_default:
        score += 3
    requires = _requires(plain, plain_low)
    if requires:
        score += 1.5
    number = _has_number(plain)
    if number:
        score += 1
    if s.subject:
        score += 1
    if s.version:
        score += 1
    how = ("`" in text and (((low.startswith("to") or may_hold(text, low, _HOW_TO_WORDS)) and _how_to(text, low))
                            or (may_hold(text, low, _VALUES_OR_NAMING_WORDS) and _VALUES_OR_NAMING.search(text, low)))) \
        or (may_hold(text, low, _STANDS_FOR_WORDS) and _STANDS_FOR.search(text, low)) \
        or ("way" in low and _BEST_WAY.search(text, low))
    # a sentence that states a limit, an order or a migration step, or counts the list it introduces
    stated = (("effect" in low or "ignored" in low or "only" in low or "not " in low or "omitted" in low or "unset" in low
               or "can't" in low or "exclusive" in low)
              and _LIMITATION.search(text, low)) \
        or ("order" in low and _IN_ORDER.search(text, low)) \
        or (("before" in low or "after" in low) and _BEFORE_AFTER.search(text, low)) \
        or (text.startswith("`") and _RETURNS.match(text) is not None) \
        or (" to be " in low and _MIGRATE.search(text, low)) \
        or ("instead" in low and _INSTEAD.search(text, low)) \
        or (_MONTH_NAME.search(text) is not None and len(_MONTHS.findall(text)) >= 2) \
        or (text.endswith(":") and i + 1 < len(sentences) and sentences[i + 1].kind == "item"
            and _COUNTED_LIST.search(text, low)
            # a list whose items name their fields ("Exit code 5: ...") answers by its items
            and not _FIELD_ITEM.match(sentences[i + 1].text))
    # a project's commitment is no chatter, though it speaks as "we": how long it supports what
    # it deprecates, in which releases it removes things, what each number of its versions means
    policy = ("least" in low or "most" in low or "releases" in low or "number" in low or "version" in low
              or "within" in low) and _POLICY.search(text, low)
    # what the author flags: a warning, or a note that puts its point in bold ("Note: All of the
    # included extensions are in **maintenance mode**.")
    flagged = text[:1] in "NWICDAT" and (m := _FLAGGED.match(text)) is not None \
        and (m.group(1) not in ("Note", "Tip") or "**" in text)
    stated = stated or policy or flagged
    if stated:
        score += 1.5
    if "`" in text:
        score += 0.5
    if how:
        score += 1.5
    listed = False  # an item of a short list of answers ("Here's what the runner uses the root directory for: ...")
    if s.kind == "item":
        # an item of a short list a sentence introduces ("the ownership rules: ...")
        first, last = (runs or _item_runs(sentences))[i]
        intro = sentences[first - 1].text if first > 0 else ""
        if intro.endswith(":") and last - first < 8:
            listed = _LIST_OF_ANSWERS.search(intro) is not None
            score += 3 if listed else 0.5
        if _full_sentence(text) and last - first < 8:
            score += 0.5  # a list item that states something, not a word or a link
    if s.kind == "table":
        score += 0.5
    narrated = narrates(text, low)
    # a statement with a figure or a requirement in it, told as a fact, not as a story
    figure = not narrated and (number or requires or says_default)
    chatty = not policy and (_CHATTY.match(text, low) or text.endswith("?"))
    if chatty:
        score -= 2
    elif s.kind == "item" and _INFRASTRUCTURE.match(text) is not None:
        return score - 2, False, figure  # the project's own CI or test rig ("CI: ...", "Bump actions/checkout from 3 to 4")
    if _REFERS_BACK.match(text, low):
        score -= 1  # kept only when it says much; then it comes with the sentence before
    if narrated:
        score -= 1  # a tutorial telling what we do next, rather than how things are
    if chatty or (narrated and not stated) or score < 0:
        return score, False, figure  # a project's own voice stating a limit or a date is no narration ("Our release months are ...")
    if s.subject or says_default or introduced or how or stated or (listed and _full_sentence(text)):
        return score, True, figure
    if s.kind == "item" and _FIELD_ITEM.match(text):
        return score, True, figure  # a field of a list that names its fields ("Exit code 5: No tests were collected")
    if number and (_NUMBER_UNIT_LOW.search(plain_low) or _NAMED_NUMBER.search(plain_low) or any(
            not own or m.group(0).lstrip("v") != own for m in _VERSION_STATED.finditer(plain))):
        return score, True, figure
    if not number and holds_any(plain_low, _SPELLED) and _NUMBER_UNIT_LOW.search(plain_low):
        return score, True, figure
    if requires and _REQUIREMENT.search(plain_low):
        return score, True, figure
    if "_" in text and _NAME_INTRODUCED.search(text):
        return score, True, figure
    # (a test of the marks and capitals _named_kind needs first: cheaper than a look for the words)
    return score, _may_name_kind(text) and holds_any(low, _KIND_WORDS) and _named_kind(text, low), figure


# a release item about the project's own build and test machinery, not the product: a CI or
# test prefix ("CI: ...", "TST: ...", "[ci] ..."), or a bump of a CI action ("Bump
# actions/setup-python from 4 to 5", "Update org/upload-nightly-action to 0.5.0")
_CHATTY, _REFERS_BACK = CaseBlind(CHATTY), CaseBlind(REFERS_BACK)  # (of every sentence a fact's score reads)
_INFRASTRUCTURE = lazy(r"\W{0,3}(?:(?-i:CI|BLD|TST|TEST|DEV)\s*:|\[(?:ci|build|tests?|dev)\]\s)"
                       r"|\W{0,3}(?:bump|update|upgrade)[sd]?\s+`?(?:actions/[\w.-]+|[\w.-]+/[\w.-]*-action\b[\w.-]*)`?\s+"
                       r"(?:from|to)\s", re.I)


# a project's policy: a commitment with a span ("support ... for at least 1 year", "keep it
# around for at least two minor releases"), removals kept to a kind of release ("only ... in
# major releases"), what a number of its version means ("The first number of the version is the
# year", "A is the major version")
_POLICY = CaseBlind(lazy(r"\bat\s+(?:least|most)\s+(?:\d+|one|two|three|four|five|six|ten|twelve|eighteen|twenty-four)\s+"
                         r"(?:(?:major|minor|feature|bugfix|patch)\s+)?(?:years?|months?|weeks?|releases?|versions?)\b"
                         r"|\bonly\b[^.;]{0,60}?\bin\s+(?:major|minor|feature|new)\s+(?:releases?|versions?)\b"
                         r"|\b(?:first|second|third|last)\s+(?:number|part|component|digit|segment)[*_]*\s+of\s+(?:the|a|each|every|our)\s+"
                         r"(?:version|release)"
                         r"|\b[A-Z]\*?\s+is\s+the\s+(?:major|minor|patch|micro|bugfix|release)\s+(?:version|number|release)"
                         # a time it promises: "you should receive an acknowledgment within 48 hours"
                         r"|\bwithin\s+(?:\d+|one|two|three|five|seven|ten|fourteen|thirty|ninety)\s+(?:business\s+|working\s+)?"
                         r"(?:hours?|days?|weeks?)\b", re.I))


# a list whose items answer one question: "the ownership rules:", "Here's a summary of what
# the runner uses the root directory for:", "for two reasons:"
_LIST_OF_ANSWERS = lazy(r"\b(?:rules?|steps?|requirements?|guarantees?|principles?|properties|reasons?|purposes?)\b"
                        r"|\b(?:is|are)\s+used\s+for\b|\buses?\s+[^:]{1,40}?\s+for\s*:\s*$", re.I)


def _plain(text: str, low: str) -> tuple[str, str]:
    """The words of a sentence with code left out and cross-references dropped; a value in code
    (`7878`, `127.0.0.1:7878`, not an example's `1`) is kept: it is a figure. With it lowercased,
    given `low`, the sentence lowercased."""
    if "`" in text:
        text = CODE_SPAN.sub(
            lambda m: m.group(1) if _LITERAL_NUMBER.fullmatch(m.group(1)) and sum(c.isdigit() for c in m.group(1)) >= 2
            else " x ", text)
        low = text.lower()
    if not holds_any(low, _XREF_WORDS):  # no cross-reference without one of its words
        return text, low
    if _XREF_LOW.search(low) is None:
        return text, low
    text = _XREF.sub("", text)
    return text, text.lower()


# The case-blind patterns, each behind a test that is cheap where it cannot match (most
# sentences): a fact's score asks a dozen of them of every sentence of a document.
_REQUIRE_LOW = lowercase_pattern(_REQUIRE)
_XREF_LOW = lowercase_pattern(_XREF)
_DIGIT = lazy(r"\d")
_CALLED_WORDS = ("called", "known", "referred", "named", "termed")


def _says_default(text: str, low: str) -> bool:
    return ("default" in low and _DEFAULT.search(text, low)) \
        or ("=" in text and "(" in text and _SIGNATURE_DEFAULTS.search(text) is not None)


# a call's signature shown with its keyword defaults: "Signature: `form(max_files=1000, max_fields=1000)`"
_SIGNATURE_DEFAULTS = lazy(r"`[A-Za-z_][\w.]*\((?:[^`()]*,\s*)?[A-Za-z_]\w*\s*=\s*[^,`()\s][^`]*\)`")


def _requires(plain: str, plain_low: str | None = None) -> bool:
    """_REQUIRE's search, on the text lowercased (`plain_low`, when the caller has it), where one
    of the words every match holds is."""
    low = plain.lower() if plain_low is None else plain_low
    return holds_any(low, _REQUIRE_WORDS) and _REQUIRE_LOW.search(low) is not None


_REQUIRE_WORDS = ("requir", "must", "minimum", "maximum", "least", "most", "than", "limit", "support", "compatible",
                  "deprecated", "removed", "longer", "discontinued", "license", "only")  # one in each match of _REQUIRE


def _has_number(plain: str) -> bool:
    return _NUMBER.search(plain) is not None


def _called(text: str) -> re.Match[str] | None:
    """_CALLED's match ("called *X*", "known as X"), looked for only where one of its words is."""
    if not holds_any(text, _CALLED_WORDS):
        return None
    return _CALLED.search(text)


_LITERAL_NUMBER = lazy(r"[-+]?\d[\d.,:_]*(?:\s*[A-Za-z%]{1,3})?")


_OPENS_SENTENCE = lazy(r"[\"'“`*_]*[A-Z`]")


def _full_sentence(text: str) -> bool:
    """Starts with a capital (or code), ends as a sentence ends, and has a few words."""
    return bool(_OPENS_SENTENCE.match(text)) and text.rstrip("*_\"'”)").endswith((".", "!")) \
        and len(text.split()) >= 4


# a list item that opens on the name it describes: "* `max_age` - Session expiry time in seconds.",
# "- **timeout** (float): ...", "`retries`: how many times ..."
_ITEM_NAME = lazy(r"^(?:`(?P<code>[A-Za-z_-][^`\s]{0,59})`|\*\*(?P<bold>[^*\s]{1,60})\*\*)(?:\s*\([^()\n]{1,40}\))?"
                  r"(?:\s*[-–—:]\s|\s+(?=[a-z]+\b))")  # or what the name does: "`tasks.dedupe` controls ..."
# the code name a sentence gives its default right before saying it: "The `ExceptionMiddleware`
# implementation defaults to ..." (two words at most between them)
_NAMED_BEFORE = lazy(r"`(?P<name>[A-Za-z_-][\w.:/()-]{0,59})`(?:\s+[a-z]+){0,2}\s+defaults?\s+to\b")
# a section title that is a name (a capital inside, or code marks: "CORSMiddleware", "in_bulk()",
# "CSRF_FAILURE_VIEW"), not a word ("Security", "Miscellaneous")
_NAME_TITLE = lazy(r"^.+[A-Z]|[_.`(]")


def _defaults(sentences: list[Sentence], doc: Document, block_of: Sequence[int] = ()) -> list[list[Any]]:
    """Every default the document states with what it is the default of: [subject, value, index,
    its sentence's section, its line] (the section and line let a page's outline be laid out
    from the analysis alone).

    The subject is the code name the sentence says it of ("The `X` implementation defaults to
    ..."), else the name its list item opens on ("* `max_age` - ... Defaults to `600`.", a
    reference's ":param int backlog:"), else the term the sentence describes (`.. py:data:: DEBUG`),
    else the section it sits in when that section is named for one setting ("tab_width"); "Default:
    8." alone says nothing without it. A name found in the sentence or its item under a term or a
    section named for another name is told apart by it ("`max_age` (CORSMiddleware)", "`backlog`
    (run_app)"): two classes' `max_age` are two settings. A release's notes say what a default
    became, not what it is: only their terms' defaults count."""
    out: list[list[Any]] = []
    column: dict[int, int | None] = {}  # a table's first row's block -> the column its header names "Default"
    for i, s in enumerate(sentences):
        if s.kind not in ("para", "item", "table", "data"):  # a settings table of any length states defaults
            continue
        if s.kind in ("table", "data") and len(block_of) > i:
            row = _table_default(sentences, block_of, i, column, doc.title)
            if row is not None:
                out.append([*row, i, s.section, s.line])
                continue
        match = _DEFAULT_VALUE.search(s.text) if "default" in s.text.lower() else None
        if not match:
            continue
        value = (match.group("value") or match.group("value2") or match.group("value3")
                 or (f"`{match.group('value4')}`" if match.group("value4") else "")
                 or match.group("value5") or match.group("value6") or "").strip().strip("*").strip()
        value = re.split(r"(?<=[.)\"'`”])\s+(?=[A-Z])", value)[0].rstrip(".")
        if not value or len(value) > 120 or REFERS_BACK.match(value):
            continue  # "Each request defaults to this config": the value is elsewhere
        section = None
        released = doc.version is not None or (0 <= s.section < len(doc.sections) and bool(doc.sections[s.section].version))
        if 0 <= s.section < len(doc.sections) and not doc.sections[s.section].version:
            title = doc.sections[s.section].title
            if len(title.split()) == 1:
                # a section named for one setting ("tab_width", "DEBUG"); not one named in words
                # ("Values from Environment Variables") nor a release ("Version 3.1.0")
                section = title
        # a release's "`X` defaults to True now" is a change, which the timelines read
        named = None if released else _named_in(sentences, block_of, i)
        if not named and (match.group("value5") or match.group("value6")) and s.kind == "para" and i > 0 \
                and sentences[i - 1].kind == "item" and sentences[i - 1].subject == s.subject:
            continue  # "(`False` by default)" in a paragraph after a parameter's item: whose, it does not say
        # a parameter of the function a reference describes ("`backlog` (int): ... (`128` by default)")
        owner = s.subject or (section if section and _NAME_TITLE.search(section) else None)
        if named and owner and named.strip("`") in (owner.strip("`"), owner.strip("`()").rsplit(".", 1)[-1]):
            named = None  # the item names what the term does ("`orphans`" under `Paginator.orphans`)
        subject = f"{named} ({owner})" if named and owner else named or s.subject or section
        if subject:
            out.append([subject, value, i, s.section, s.line])
    return out[:300]


# a table's "Default" column; a label whose value is in the block below it ("**Default:**", its
# colon left out) is no statement of its own
_DEFAULT_HEADER = lazy(r"^\**defaults?(?:\s+values?)?\**$", re.I)
_NO_VALUE = frozenset({"", "-", "—", "–", "n/a", "none given", "required"})


def _table_default(sentences: list[Sentence], block_of: Sequence[int], i: int, column: dict[int, int | None],
                   title: str) -> tuple[str, str] | None:
    """(setting, default) of a table's row where the table's header names a column "Default"
    (`Option | Type | Default | Description`): the row's first cell, told apart by the document's
    title (two extensions' `class` option are two settings), and its cell in that column."""
    # a table's rows are blocks of their own, one under the other (a rule may follow the header)
    first = i
    while (first > 0 and sentences[first - 1].kind in ("table", "data") and block_of[first - 1] >= block_of[first] - 1
           and 0 < sentences[first].line - sentences[first - 1].line <= 2):
        first -= 1
    block = block_of[first]
    if block not in column:
        header = [c.strip() for c in sentences[first].text.split(" | ")]
        found = [n for n, c in enumerate(header) if _DEFAULT_HEADER.match(c)]
        column[block] = found[0] if len(found) == 1 and found[0] > 0 else None
    at = column[block]
    if at is None or i == first:
        return None
    cells = [c.strip() for c in sentences[i].text.split(" | ")]
    header_cells = len(sentences[first].text.split(" | "))
    if len(cells) != header_cells or cells[at].lower() in _NO_VALUE or len(cells[at]) > 120:
        return None
    name = cells[0]
    if not name or len(name) > 60 or not (name.startswith("`") or len(name.split()) == 1):
        return None  # a row named in words ("Normal text") is no setting
    return (f"{name} ({title})" if title else name), cells[at]


def _named_in(sentences: list[Sentence], block_of: Sequence[int], i: int) -> str | None:
    """The name a default's sentence is about where the sentence or its list item says it (see
    _defaults), as written in code."""
    s = sentences[i]
    before = _NAMED_BEFORE.search(s.text)
    if before:
        return f"`{before.group('name')}`"
    if s.kind != "item" or len(block_of) <= i:
        return None
    first = i
    while first > 0 and block_of[first - 1] == block_of[i]:
        first -= 1
    m = _ITEM_NAME.match(sentences[first].text)
    if m is None:
        return None
    return f"`{m.group('code')}`" if m.group("code") else m.group("bold")
