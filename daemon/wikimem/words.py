"""What a sentence's wording says about it (a pointer elsewhere, a tutorial's chatter, a
sentence that leans on the one before, code), shared by the analysis of sources (analysis.py)
and the offline pages (backends/offline_pages.py); a module of its own so that neither imports
the other for them. Words themselves (stop words, keys, singulars) are the lexicon's."""

from __future__ import annotations

import re

from .patterns import given_flags, lazy

# --- what a sentence's wording says about it (key facts, key points, leads) --------------------
# a sentence that only sends the reader elsewhere, which says nothing itself: "For more, see
# ...", "For details about the changes, see the release notes", "Please refer to ...", "More
# details can be found in ..."
_POINTER = (
    r"for\s+(?:more|further|additional|complete|full|details|information|a\s+(?:full|complete)|the\s+(?:full|complete))\b"
    r"(?:[^.!?]|\.(?=\S)){0,80}?\b(?:see|refer\s+to|read|consult|visit)\b"  # a version's dot ends no sentence
    r"|(?:please\s+)?(?:refer\s+to|consult)\b|please\s+(?:see|read)\b|see\s+also\b"
    r"|more\s+(?:information|details)\s+(?:is|are|can\s+be)\s+(?:available|found)\b")
POINTER = lazy(rf"^(?:{_POINTER})", re.IGNORECASE)
# a tutorial's chatter, not a statement: "Let's ...", "Now ...", "As you can see", "To
# illustrate"; and a pointer elsewhere
CHATTY = lazy(
    r"^(?:let['’]s|we['’]ll|we\s+will|we['’]re|in\s+this\s+(?:chapter|section)|now\b|next\b|here\b|then\b|so\b"
    r"|as\s+you\s+(?:can\s+)?see|you['’]ll|remember|recall|(?:in\s+)?listing\s+\d|for\s+example\b|for\s+instance\b"
    r"|first,|finally,|this\s+(?:chapter|section)|in\s+(?:this|the\s+(?:previous|next|following))\s+(?:example|listing|code)"
    r"|to\s+(?:illustrate|demonstrate|show|see|explore|understand|recap|summarize)\b|before\s+we\b|for\s+now\b|see\s"
    rf"|{_POINTER})",
    re.IGNORECASE)
# a pointer to a later part of the text
FORWARD = lazy(r"\b(?:later\s+in|in\s+(?:this|the\s+next|a\s+later)\s+(?:chapter|section)|in\s+chapter\s+\d+"
               r"|we['’]ll\s+(?:see|discuss|cover|look|explore|talk))\b", re.IGNORECASE)
# a tutorial telling what we do next rather than how things are
NARRATION = lazy(r"\b(?:we|we['’](?:ll|re|ve|d)|us|our|let['’]s|you['’]ll|you\s+should)\b", re.IGNORECASE)
# a sentence that leans on the one before ("This practice ..."); "This is a ..." defines
REFERS_BACK = lazy(r"^(?:this|that|these|those|such|it|they|the\s+latter|the\s+former)\b"
                   r"(?!\s+(?:is|are)\s+(?:a|an|the)\b)", re.IGNORECASE)
# code rather than prose, once its code spans are taken out (see code_like)
# (each part opens on a mark, "()" on its bracket, which then looks behind it for the name before:
# a search skips from mark to mark rather than trying every character; a brace anywhere is a
# match, so a brace at the end needs no part of its own)
_CODE_LIKE = lazy(r"[{}]|;\s*$|:=|\((?<=\w\()\)|==|&&|\|\||->")
CODE_SPAN = lazy(r"``?([^`\n]+?)``?")  # a Markdown code span; group 1 is its text


def says_name(text: str, name: str, *, possessive: bool = False) -> bool:
    """Whether a text says a name as a word of its own (any case): "use -j 4" says `-j`; "The
    documented project's name." says `project` only when a possessive counts (`possessive`),
    and a sentence read alone names no one by it."""
    bare = name.strip("`")
    after = r"(?![\w-])" if possessive else r"(?![\w-]|['’]s\b)"
    return re.search(r"(?<![\w-])" + re.escape(bare) + after, text, re.IGNORECASE) is not None


# letters a case-blind pattern matches to an ASCII letter that lower() does not turn into it
_FOLDED_APART = ("\u0130", "\u0131", "\u017f")  # İ, dotless ı, long ſ


def holds_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether one of `words` is in `text` (a loop: a third less of the time of any() over a
    generator, asked of every sentence before the patterns that need one of the words)."""
    for word in words:
        if word in text:
            return True
    return False


def may_hold(text: str, low: str, words: tuple[str, ...]) -> bool:
    """Whether a case-blind pattern every match of which holds one of `words` (in lowercase)
    may match `text`: one of them is in `low` (text.lower()), or the text holds a letter the
    pattern may match though lower() leaves it apart (İ, ı, ſ). A test before the pattern:
    most sentences hold none of its words, and the search costs more than the test."""
    for word in words:  # (holds_any's loop, without a call: asked several times of every sentence)
        if word in low:
            return True
    return not text.isascii() and any(c in text for c in _FOLDED_APART)


class CaseBlind:
    """A case-blind pattern asked whether it matches a text, given the text lowercased (`low`).
    On an ASCII text (nearly every sentence) its lowercase form without IGNORECASE is asked of
    `low`: lower() folds ASCII letters as IGNORECASE does, so it matches where the pattern
    matches the text, in about half the time. Any other text is asked as it is (lower() leaves
    İ, ı and ſ apart from the letters IGNORECASE matches them to). Both forms are compiled when
    first asked (patterns.lazy)."""

    __slots__ = ("pattern", "lowercase")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        flags = given_flags(pattern)
        # no part that is case-sensitive after all, nor a letter written as its code
        assert flags & re.IGNORECASE and not re.search(r"\(\?-i|\\[xuUN]", pattern.pattern)
        self.pattern = pattern
        # its letters in lowercase; an escape keeps its case (\S is not \s)
        lowered = _LETTER_OR_ESCAPE.sub(lambda m: m.group(0) if m.group(0)[0] in "\\(" else m.group(0).lower(),
                                        pattern.pattern)
        self.lowercase = lazy(lowered, flags & ~re.IGNORECASE)

    def search(self, text: str, low: str) -> bool:
        return (self.lowercase.search(low) if text.isascii() else self.pattern.search(text)) is not None

    def match(self, text: str, low: str) -> bool:
        return (self.lowercase.match(low) if text.isascii() else self.pattern.match(text)) is not None


_LETTER_OR_ESCAPE = lazy(r"\\.|\(\?P(?:<\w+>|=\w+\))|[A-Z]")  # a group's name keeps its case too


def lowercase_pattern(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """A case-blind pattern for lowercased text: the same pattern, its letters in lowercase,
    without IGNORECASE (a third of the time). Only for patterns with no escaped capitals."""
    assert given_flags(pattern) & re.IGNORECASE and not re.search(r"\\[A-Z]", pattern.pattern)
    return lazy(pattern.pattern.lower())


# NARRATION for lowercased text, each word opening on its first letter and then looking behind
# it for the start of a word (the test \b makes there): the search skips to the letters the
# words start with, rather than trying the pattern at every character (a third of the time)
_NARRATION_LOW = lazy(r"(?:w(?<!\w.)e|w(?<!\w.)e['’](?:ll|re|ve|d)|u(?<!\w.)s|o(?<!\w.)ur|l(?<!\w.)et['’]s"
                      r"|y(?<!\w.)ou['’]ll|y(?<!\w.)ou\s+should)\b")
_FORWARD_LOW = lowercase_pattern(FORWARD)


def narrates(text: str, low: str | None = None) -> bool:
    """NARRATION.search, on the text lowercased (`low`, when the caller has it)."""
    return _NARRATION_LOW.search(text.lower() if low is None else low) is not None


def points_forward(text: str, low: str | None = None) -> bool:
    """FORWARD.search, on the text lowercased (`low`, when the caller has it)."""
    return _FORWARD_LOW.search(text.lower() if low is None else low) is not None


def code_like(text: str) -> bool:
    """A line of code, not a sentence about it: "The `->` operator ..." is prose."""
    if _CODE_MARK.search(text) is None:
        return False  # most sentences: none of the characters _CODE_LIKE needs
    return _CODE_LIKE.search(CODE_SPAN.sub("", text) if "`" in text else text) is not None


_CODE_MARK = lazy(r"[{};=(&|>]")  # one in each match of _CODE_LIKE
