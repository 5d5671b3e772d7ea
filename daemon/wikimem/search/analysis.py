"""How text becomes index terms: the analyzer (identifiers also as their parts), the schema,
and the stems snippets match on."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from functools import lru_cache
from typing import Any

_ANALYZER: Any = None


_IDENT_PART = re.compile(r"[^\W\d_]\w*")


_DOTTED = re.compile(r"_*[^\W\d_]\w*(?:\._*[^\W\d_]\w*)+")


def identifier_parts(word: str) -> list[str]:
    """The words inside a snake_case or dotted identifier: `raw_enabled` -> raw, enabled;
    `flask.g` -> flask, g. Versions are no identifiers (`1.19`, `go1.21` stay whole)."""
    dotted = "." in word and _DOTTED.fullmatch(word) is not None
    if "_" not in word and not dotted:
        return []
    parts: list[str] = []
    for chunk in word.split(".") if dotted else [word]:
        if chunk != word:
            parts.append(chunk)  # flask.__version__ -> __version__ too
        if "_" in chunk:
            parts += [p for p in chunk.split("_") if _IDENT_PART.fullmatch(p)]
    return list(dict.fromkeys(p for p in parts if p != word))


class IdentifierParts:
    """A whoosh filter: an identifier is indexed whole and also as its parts, at the same
    position, so a question that says "raw enabled" finds the setting `raw_enabled`.
    (Duck-typed rather than a whoosh Filter subclass: importing whoosh here would slow every
    import of this module; the index pickles the analyzer, so the class lives at top level.)"""

    is_morph = False

    def __call__(self, tokens: Iterable[Any]) -> Iterator[Any]:
        for t in tokens:
            text = t.text  # later filters rewrite t.text in place: keep the original
            yield t
            for part in identifier_parts(text):
                t.text = part
                yield t

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


WORDS_KEPT = 50_000  # words whose terms the analyzer keeps (as many as whoosh's stem cache)


# what the analyzer made of each word it saw: one table for every Analyzer object (the index
# unpickles its own with the schema), so the daemon can drop it after each batch
_WORDS: dict[str, tuple[str, ...]] = {}


def forget_words() -> None:
    """Drop what the analyzer kept of the words it saw (the daemon, after each batch)."""
    _WORDS.clear()


class Analyzer:
    """The analyzer: RegexTokenizer | LowercaseFilter | IdentifierParts | StopFilter(minsize=1) |
    StemFilter, in one pass. What the chain makes of a word is kept (a text repeats its words:
    running five generators per token was a fifth of the index build), so the tokens equal the
    chain's, positions included; the chain itself runs for the rare calls that ask for more
    (character offsets, stop words kept, the original text)."""

    _steps: Any  # _chain_steps of the chain, once asked

    def __init__(self) -> None:
        from whoosh.analysis import (
            CompositeAnalyzer,
            LowercaseFilter,
            RegexTokenizer,
            StemFilter,
            StopFilter,
        )

        # the default token pattern keeps versions and identifiers whole: 1.19, go1.21, f64;
        # identifiers also count as their parts (see identifier_parts)
        from ..lexicon import INDEX_STOP

        self.chain = CompositeAnalyzer(RegexTokenizer(), LowercaseFilter(), IdentifierParts(),
                                       StopFilter(stoplist=INDEX_STOP, minsize=1), StemFilter(cachesize=50_000))

    @property
    def items(self) -> list[Any]:
        return list(self.chain.items)

    def __getstate__(self) -> dict[str, Any]:
        return {"chain": self.chain}  # the index pickles its schema: not the words' table

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.chain = state["chain"]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def _terms(self, word: str) -> tuple[str, ...]:
        """The terms the chain makes of one token (none when it is a stop word)."""
        if len(_WORDS) > WORDS_KEPT:
            _WORDS.clear()
        steps = self.__dict__.get("_steps", False)
        if steps is False:
            steps = self._steps = _chain_steps(self.chain)
        if steps is None:
            made = tuple(t.text for t in self.chain(word, tokenize=False))
        else:
            stops, shortest, longest, ignore, stem = steps
            low = word.lower()
            if "_" in low or "." in low:
                made = tuple(text if text in ignore else stem(text) for text in (low, *identifier_parts(low))
                             if len(text) >= shortest and (longest is None or len(text) <= longest)
                             and text not in stops)
            elif len(low) < shortest or (longest is not None and len(low) > longest) or low in stops:
                made = ()  # a word with no identifier parts (most): its one term, or none
            else:
                made = (low if low in ignore else stem(low),)
        _WORDS[word] = made
        return made

    def counts(self, value: str) -> dict[str, int]:
        """How often each term occurs in the text: what the index stores of it."""
        words = _WORDS
        found: dict[str, int] = {}
        for word in TOKEN.findall(value):
            terms = words.get(word)
            if terms is None:
                terms = self._terms(word)
            for term in terms:
                found[term] = found.get(term, 0) + 1
        return found

    def terms(self, value: str) -> list[str]:
        """The text's terms in the order the analyzer yields them, each one position after the one
        before it: what a quoted phrase is checked against."""
        words = _WORDS
        out: list[str] = []
        for word in TOKEN.findall(value):
            terms = words.get(word)
            if terms is None:
                terms = self._terms(word)
            out += terms
        return out

    def terms_for(self, value: str, wanted: Collection[str],
                  others: dict[str, tuple[None, ...]] | None = None) -> list[str | None]:
        """The text's terms as `terms` lists them, but a word none of whose terms can be one of
        `wanted` stands as one None (or nothing, when it makes no term): whether the wanted terms
        stand in a row reads the same, and a word new to the process is stemmed only when it
        might make one of them (a quoted phrase's first check of its candidates met thousands of
        new words, each stemmed). A Porter stem is what is left of the word after cutting a
        suffix, and at most four letters added (each step that adds letters first cuts at least
        as many of those added before), never its first: so a word (or an identifier part of it)
        that does not start with a wanted term's letters but its last four cannot make it.
        `others` keeps what such words stand as, for the next text checked for the same terms."""
        steps = self.__dict__.get("_steps", False)
        if steps is False:
            steps = self._steps = _chain_steps(self.chain)
        if steps is None:
            return list(self.terms(value))
        starts = word_starts(wanted)
        words = _WORDS
        if others is None:
            others = {}
        out: list[str | None] = []
        for word in TOKEN.findall(value):
            terms: tuple[str | None, ...] | None = words.get(word)
            if terms is None:
                terms = others.get(word)
            if terms is None:
                terms = self._places(word, starts, steps, others)
            out += terms
        return out

    def _places(self, word: str, starts: tuple[str, ...], steps: tuple[Any, ...],
                others: dict[str, tuple[None, ...]]) -> tuple[str | None, ...]:
        """What a word new to `others` stands as in terms_for: its terms when it may make a wanted
        term (it starts with one of `starts`), else one None, or nothing for a stop word."""
        stops, shortest, longest = steps[0], steps[1], steps[2]
        low = word.lower()
        texts = (low, *identifier_parts(low)) if "_" in low or "." in low else (low,)
        if any(text.startswith(starts) for text in texts):
            return self._terms(word)
        made = others[word] = (None,) if any(
            len(text) >= shortest and (longest is None or len(text) <= longest) and text not in stops
            for text in texts) else ()
        return made

    def in_a_row(self, value: str, phrase: tuple[str, ...],
                 others: dict[str, tuple[None, ...]] | None = None) -> bool:
        """Whether the text's terms (`terms`) hold the phrase's terms one after another. Only the
        words around each place one of the terms may come from are read (a text of a few hundred
        words holds a phrase's rarest word a few times): every word that makes a term holds the
        term's letters but its last four (see terms_for) at its start or an identifier part's,
        so a word that makes the term is around one of the places those letters occur, and the
        words around it are read until each side has as many words that make terms as the
        phrase has terms but one, or the text ends. A text whose lower case is not one character
        for each of its own (a dotted capital I), or where it depends on the letters around (a
        capital sigma), is read whole."""
        if others is None:
            others = {}
        steps = self.__dict__.get("_steps", False)
        if steps is False:
            steps = self._steps = _chain_steps(self.chain)
        low = value.lower()
        if steps is None or len(low) != len(value) or "\u03a3" in value or len(phrase) < 2:
            return _holds(self.terms_for(value, phrase, others), phrase)
        each, starts = _phrase_starts(phrase)
        # the term whose letters occur least often: where the phrase may stand
        letters = min(each, key=low.count)
        count = low.count(letters)
        if count == 0:
            return False
        reach = READ_AROUND * (len(phrase) - 1)
        if count * 2 * reach >= len(value):
            return _holds(self.terms_for(value, phrase, others), phrase)
        words = _WORDS
        need = len(phrase) - 1
        at = low.find(letters)
        while at >= 0:
            wide = reach
            while True:
                begin, end = _run_edges(value, at - wide, at + len(letters) + wide)
                places: list[tuple[str | None, ...]] = []
                home = -1  # the word that holds `at`
                for match in TOKEN.finditer(value, begin, end):
                    word = match.group()
                    terms: tuple[str | None, ...] | None = words.get(word)
                    if terms is None:
                        terms = others.get(word)
                    if terms is None:
                        terms = self._places(word, starts, steps, others)
                    if home < 0 and match.end() > at:
                        home = len(places)
                    places.append(terms)
                if home < 0:
                    home = len(places)
                before = sum(1 for terms in places[:home] if terms)
                after = sum(1 for terms in places[home + 1:] if terms)
                if (before >= need or begin == 0) and (after >= need or end == len(value)):
                    break
                wide *= 4
            if _holds([term for terms in places for term in terms], phrase):
                return True
            at = low.find(letters, at + 1)
        return False

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Iterator[Any]:
        if chars or keeporiginal or not removestops or not tokenize:
            yield from self.chain(value, positions=positions, chars=chars, keeporiginal=keeporiginal,
                                  removestops=removestops, start_pos=start_pos, start_char=start_char,
                                  tokenize=tokenize, mode=mode, **kwargs)
            return
        from whoosh.analysis import Token

        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        t.stopped = False
        words = _WORDS
        pos = None
        for i, match in enumerate(TOKEN.finditer(value)):
            word = match.group(0)
            terms = words.get(word)
            if terms is None:
                terms = self._terms(word)
            for term in terms:
                t.text = term
                t.boost = 1.0
                if positions:
                    # StopFilter's numbering: the first term kept stays where the tokenizer put
                    # it, each later one comes one after the term before
                    pos = start_pos + i if pos is None else pos + 1
                    t.pos = pos
                yield t


# characters read on each side of a place a phrase may stand, per term of the phrase but one
# (a word and the space after it, with a stop word or two between): read wider when too few
READ_AROUND = 24


def _run_edges(value: str, begin: int, end: int) -> tuple[int, int]:
    """[begin, end) widened to the edges of the runs of word characters (\\w: str.isalnum and
    the underscore), stars and dots they cut: TOKEN reads the same words inside them as in the
    whole text."""
    begin, end = max(0, begin), min(len(value), end)
    while begin > 0 and (value[begin - 1].isalnum() or value[begin - 1] in "_*."):
        begin -= 1
    while end < len(value) and (value[end].isalnum() or value[end] in "_*."):
        end += 1
    return begin, end


def word_starts(wanted: Iterable[str]) -> tuple[str, ...]:
    """The letters every word that makes one of the terms starts with, in lower case: a Porter
    stem keeps its word but at most the last four letters (see Analyzer.terms_for)."""
    return tuple({t[:max(1, len(t) - 4)] for t in wanted})


@lru_cache(maxsize=256)
def _phrase_starts(phrase: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(each term's word_starts, in the phrase's order; all the terms'): the same for every text
    a phrase is checked against (a quoted phrase's first pass checked hundreds)."""
    return tuple(word_starts((t,))[0] for t in phrase), word_starts(phrase)


def _holds(terms: list[str | None], phrase: tuple[str, ...]) -> bool:
    """Whether `terms` has the phrase's terms at consecutive places."""
    first, n, want = phrase[0], len(phrase), list(phrase)
    at = -1
    while True:
        try:
            at = terms.index(first, at + 1)
        except ValueError:
            return False
        if terms[at:at + n] == want:
            return True


def _chain_steps(chain: Any) -> tuple[frozenset[str], int, int | None, frozenset[str], Any] | None:
    """What the chain does to one word, as plain values, when it is the chain Analyzer makes:
    its generators cost more than the work (a token object through five filters, a word at a
    time, was most of the cost of a new word). None for any other chain: it runs as it is."""
    from whoosh.analysis import LowercaseFilter, RegexTokenizer, StemFilter, StopFilter

    items = list(getattr(chain, "items", ()))
    kinds = [type(item) for item in items]
    if kinds != [RegexTokenizer, LowercaseFilter, IdentifierParts, StopFilter, StemFilter]:
        return None
    stop, stemmer = items[3], items[4]
    if stemmer.lang:
        return None
    return stop.stops, stop.min, stop.max, stemmer.ignore, stemmer.stemfn


def analyzer() -> Any:
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = Analyzer()
    return _ANALYZER


# the values of the schema's `kind` field, and the era of the newest release's passages (its
# `era` field; ranked as 10, found by FastScorer.newest_release): here, not with the document
# loaders, whose import was most of what an MCP server's warm-up had left after a first search
KINDS = ("source", "concept", "fact", "answer", "raw")
NEWEST_ERA = 11


def schema() -> Any:
    """Two levels of entry per file: one `doc` entry (what the file is about: title, aliases,
    path) and one `part` entry per passage (its heading trail and text). A file scores its
    best passage plus its doc entry, so a title counts once per file instead of once per
    passage, and the title postings stay short."""
    from whoosh.fields import ID, STORED, TEXT, Schema

    from .terms import Terms

    ana = analyzer()

    def text(stored: bool = False) -> Any:
        # no word positions: they were a third of the build, and a quoted phrase is checked
        # against the stored text instead (ranking.phrase_scores)
        field = TEXT(analyzer=ana, stored=stored, phrase=False)
        field.format = Terms(field_boost=field.format.field_boost)
        return field

    return Schema(
        path=ID(stored=True),
        kind=ID(stored=True),
        level=ID(stored=True),  # doc | part
        era=ID,  # a changelog passage's release, oldest 0 to newest 10 (see release_eras)
        collection=ID,  # the top folder of raw/ the file belongs to (documents.collection_of)
        title=text(stored=True),
        aliases=text(),
        where=text(),
        headings=text(stored=True),
        body=text(stored=True),
        lines=STORED,  # [[offset in body, line in file], ...] for citing the snippet's line
        anchor=STORED,
    )


_PATH_WORDS = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+")


def path_words(path: str) -> str:
    """`raw/release-notes/go1.19.md` -> "raw release notes go 1.19 md": versions stay whole,
    and zero-padded numbers also count as themselves (`pep-0008` is PEP 8)."""
    words = _PATH_WORDS.findall(path)
    words += [w.lstrip("0") for w in words if w[0] == "0" and w.isdigit() and w.strip("0")]
    return " ".join(words)


# the analyzer's own token pattern: running the whole analyzer chain over each result's
# passage was a third of a warm query; a word's stem is looked up once and kept. It matches
# what whoosh's default_pattern [\w\*]+(\.?[\w\*]+)* matches (after a run of word characters
# only a dot can go on: findall 20% faster), its group not captured, for findall; nothing comes
# after the dotted parts, so they are never given back (possessive: findall 15% faster again)
TOKEN = re.compile(r"[\w\*]+(?:\.[\w\*]+)*+")


STEMS: dict[str, str] = {}


_STEP: Any = None


def stem_word(word: str) -> str:
    """What the analyzer makes of one token with removestops=False: lower case, and stemmed
    unless it is a stop word (those stay as they are)."""
    global _STEP
    if _STEP is None:
        from whoosh.analysis import StemFilter, StopFilter

        items = analyzer().items
        stops: frozenset[str] = next((f.stops for f in items if isinstance(f, StopFilter)), frozenset())
        stemmer = next(f for f in items if isinstance(f, StemFilter))
        _STEP = (stops, stemmer.ignore, stemmer.stemfn)
    stops, ignore, stemfn = _STEP
    low = word.lower()
    stem = low if low in stops or low in ignore else stemfn(low)
    if len(STEMS) > 200_000:
        STEMS.clear()
    STEMS[word] = stem
    return stem
