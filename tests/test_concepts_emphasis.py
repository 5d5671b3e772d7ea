"""A concept's name: an emphasized modifier is no thing of its own (a fixture written for the
rule, not copied from a set)."""

from __future__ import annotations

from wikimem.analysis import defined_term


def test_an_emphasized_word_before_its_noun_is_no_term() -> None:
    """"the so-called **global** dispatch" made a concept page "Global"."""
    assert defined_term("This illustrates registration with the so-called **global** dispatch.") is None
    assert defined_term("A feature called *hooks* lets you extend it.")[0] == "hook"
    assert defined_term("We use a structure called a *hash map* in code.")[0] == "hash map"
