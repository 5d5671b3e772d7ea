"""Patterns compiled on first use (patterns.lazy) behave as the compiled pattern does."""

from __future__ import annotations

import copy
import pickle
import re

import pytest

from wikimem import analysis, facts, patterns, words
from wikimem.patterns import compiled, given_flags, lazy

TEXTS = ["Acme 2.1 ships with Toolkit 3.4.", "no digits here", "", "Ünïcode Acme 10 and acme 11", "a-b a-b"]


@pytest.mark.parametrize(("source", "flags"), [
    (r"(?P<name>[A-Z]\w+)\s+(?P<ver>\d+(?:\.\d+)*)", 0),
    (r"acme\s+(\d+)", re.IGNORECASE),
    (r"(?i)toolkit", 0),
    (r"-", 0),
])
def test_a_lazy_pattern_answers_as_the_compiled_one(source: str, flags: int) -> None:
    made, plain = lazy(source, flags), re.compile(source, flags)
    assert made.pattern == plain.pattern
    assert (made.flags, made.groups, made.groupindex) == (plain.flags, plain.groups, plain.groupindex)
    for text in TEXTS:
        for method in ("search", "match", "fullmatch"):
            a, b = getattr(made, method)(text), getattr(plain, method)(text)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
        assert [m.span() for m in made.finditer(text)] == [m.span() for m in plain.finditer(text)]
        assert made.findall(text) == plain.findall(text)
        assert made.sub("<\\g<0>>", text) == plain.sub("<\\g<0>>", text)
        assert made.subn("x", text, count=1) == plain.subn("x", text, count=1)
        assert made.split(text) == plain.split(text)


def test_a_lazy_pattern_is_compiled_when_first_asked_and_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = re.compile

    def counting(source: str, flags: int = 0) -> re.Pattern[str]:
        calls.append(source)
        return real(source, flags)

    monkeypatch.setattr(re, "compile", counting)
    made = lazy(r"kettle\d+")
    assert calls == [] and made.pattern == r"kettle\d+" and given_flags(made) == 0  # its source asks nothing
    assert made.search("the kettle42 boils")
    assert made.findall("kettle1 kettle2") == ["kettle1", "kettle2"]
    assert calls == [r"kettle\d+"]


def test_a_match_names_the_compiled_pattern() -> None:
    made = lazy(r"\d+")
    match = made.search("version 12")
    assert match is not None and match.re is compiled(made) and match.re is not made
    plain = re.compile(r"\d+")
    assert compiled(plain) is plain


def test_a_lazy_pattern_copies_and_pickles() -> None:
    made = lazy(r"a(b)", re.IGNORECASE)
    for other in (copy.copy(made), copy.deepcopy(made), pickle.loads(pickle.dumps(made))):
        assert other.pattern == made.pattern and given_flags(other) == re.IGNORECASE
        assert other.search("xAB").group(1) == "B"
    made.search("ab")  # compiled: the copies still carry what they need
    assert pickle.loads(pickle.dumps(made)).search("AB")


def test_every_pattern_the_readers_hold_compiles() -> None:
    """A lazy pattern's error shows when it is first asked: the whole set is compiled here, as a
    compile does before it forks its workers."""
    assert analysis.lazy is lazy and facts.lazy is lazy and words.lazy is lazy  # the modules made theirs lazily
    patterns.compile_all()


def test_case_blind_patterns_match_as_their_case_blind_form() -> None:
    blind = words.CaseBlind(lazy(r"\bby\s+default\b", re.IGNORECASE))
    for text in ("Enabled By Default.", "by  default", "nothing", "İt is BY DEFAULT"):
        assert blind.search(text, text.lower()) == bool(re.search(r"\bby\s+default\b", text, re.IGNORECASE))
    with pytest.raises(AssertionError):
        words.CaseBlind(lazy(r"by default"))  # not case-blind
