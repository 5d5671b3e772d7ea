"""Facts that change: one extractor for the compile, lint and search.

A fact is a statement of a versioned or numeric value about a subject:

    "Acme 1.21 requires macOS 10.15 Catalina or later"      -> min macos            = 10.15
    "The library supports Python 3.9 and newer."            -> min python           = 3.9
    "Acme supports Python 3.10, 3.11, 3.12, and 3.13."      -> min python           = 3.10 (3.13 the newest listed)
    "Acme 0.16.x supports Python 2.7 and Python >= 3.5"     -> min python           = 2.7
    "Drop support for Python 3.8."  (in "Version 3.1.0")    -> min python, drops      3.8
    "Drop Toolkit 0.18.1 and Toolkit 0.19 support."         -> min toolkit, drops     0.19
    "0.15.x is the last version supporting Python 2.6"      -> min python, last       2.6
    "Require Toolkit >= 3.0.0."                             -> min toolkit          = 3.0.0
    "The server-side default is unchanged at TLS 1.0"       -> default tls (server) = 1.0
    "the minimum supported version of PostgreSQL is increased from 13 to 14"
                                                            -> min postgresql       = 14, replaced 13
    "The minimum Python version is now 3.10."               -> min python           = 3.10
    "Use Renderer v4 by default"                            -> default renderer     = 4
    "changed from version 2 to version 3 in 4.0, and from version 3 to version 4 in 9.0"
                                                            -> (the chain's last)     4, replaced 3
    "We intend for Acme 1.19 to require Acme 1.17 or later for bootstrap"
                                                            -> min go (bootstrap)   = 1.17, a plan for 1.19
    a support table ("Program | ... | Supported Versions", "Toolkit | ... | 3.4, 3.3, 3.2")
                                                            -> min toolkit          = 3.2 (3.4 the newest listed)
    "Switch the default upgrade strategy to be 'only-if-needed'"
                                                            -> choice upgrade strategy = only-if-needed
    "The default DBAPI driver has been changed from `a` to `b`"
                                                            -> choice dbapi driver  = b, replaced a

A default that is a word (a "choice": a strategy, a renderer, a driver) is a fact of its own:
its value is the word (facts.choice_value makes it a value tuple that agrees only with the same
word), a release's change of it makes its timeline, and a note that still states the old word
is a stale note. It is read without a digit in the sentence, only where "default" is said.

Each fact carries the subject normalised (the same fact phrased differently is one key), the
release it belongs to as written ("2.0rc1": its changelog section's, a `versionadded`, the
release its sentence names for its own subject, else the document's own), ordered by the
lexicon's version keys, its series (filled in by products.py: the product whose documentation
it is), and its role: an outcome, a plan ("will require"), a past statement ("previously
required"), or a quoted older note; past statements and negations are dropped. Whose fact it is
rides in the key's role: what the sentence says requires the value ("the naming feature",
"Six", "you"), empty for the document's own product or "it", so a feature's need, a plugin's
requirement or another package's support is never taken for the product's minimum.

Precision over recall: a fact needs a trigger word right before its value, a bound (`X>=1.2`)
counts only as the object of a requirement (never a condition: "on Python>=3.12", "when using
X>=2"), and a table row counts only in a support table (a column of supported versions).

Beside its facts each source gets a Profile: what kind of document it is (reference page, a
release's notes or a changelog, a requirements list), the names it gives its releases and the
newest one, and the words of its title, from which products.py names the product of a
documentation set.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain
from typing import Any

from .lexicon import (
    ARTICLES,
    DOC_WORDS,
    STOPWORDS,
    parse_version,
    product_key,
    release_numbers,
    title_release,
    version_key,
    version_numbers,
)
from .patterns import compiled, lazy
from .sources.sections import release_of
from .words import holds_any

FORMAT = 68  # the cached record's format (record(), read by timelines.facts_of): a change re-reads every source

# a versioned name: "macOS 10.15", "Windows Server 2016", "TLS 1.2", "OS X 10.10", "Linux kernel 2.6.32"
# a capitalized name ("Node.js", "C++", "macOS"); dots inside a name, never at its end
_WORD_NAME = r"(?:[A-Z](?:[\w+.]*[\w+])?|[a-z]+[A-Z](?:[\w+.]*[\w+])?)"
_NAME = rf"{_WORD_NAME}(?:[ ](?:{_WORD_NAME}|kernel)){{0,2}}"
# a pre-release of a dotted version ("Python 3.15b1", "Toolkit 2.0rc2") is a version of that release
# line: "support for Python 3.15b1" supports 3.15, as the line's first builds do
VERSIONED = lazy(rf"\b(?P<name>{_NAME})\s+(?:version\s+)?v?(?P<ver>\d+(?:\.\d+)*)(?:(?:(?<=\.\d)|(?<=\.\d\d))(?:a|b|rc)\d+)?(?![\w.]*\w)")
# lowercase names ("glibc 2.17", "npm 9.1") count only right after a requirement word, with a dotted version
LOWER_AFTER_TRIGGER = lazy(
    r"\b(?:requires?|required|requiring|needs?|at\s+least)\s+(?:the\s+|a\s+)?(?P<name>[a-z][\w+.-]*[\w+])\s+(?:version\s+)?v?"
    r"(?P<ver>\d+\.\d+(?:\.\d+)*)(?![\w.]*\w)"
)
# ... or before an "or newer" that a requirement word follows: "pluggy 1.5 or newer is all it needs"
LOWER_OR_LATER = lazy(r"(?<![\w.-])(?P<name>[a-z][\w+.-]*[\w+])\s+v?(?P<ver>\d+\.\d+(?:\.\d+)*)(?=\+|\s+(?:or|and)\s+"
                      r"(?:newer|later|higher|greater|above)\b)")
# one in each match of the two (a test before them: most sentences have none)
_LOWER_AFTER_WORDS = ("requir", "need", "least")
_LOWER_OR_LATER_WORDS = ("+", "newer", "later", "higher", "greater", "above")
_CLAUSE_END = lazy(r"[.;:,(]\s")
# "Toolkit >= 3.0.0", "toolkit>=8.1.3", "Lib2>3.1.2": a dependency bound, in any case
BOUND = lazy(r"\b(?P<name>[A-Za-z][\w.+-]*?[A-Za-z+])\s*(?P<op>>=|>|≥)\s*v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)")
# what makes a bound a requirement: a verb of needing said of it ("Require X>=2", "X>=2 is now
# required", "we depend on X>=2"); "requirements" alone (a list's heading) is not one
_BOUND_CONTEXT = lazy(r"\b(?:requir(?:e|es|ed|ing)|needs?|needed|depends?\s+on|depending\s+on|relies\s+on|"
                      r"minimum|at\s+least|bump\w*|upgrade\w*)\b", re.I)
# a bound right after one of these words is a condition on something else ("on Python>=3.12",
# "when using attrs>=25", "compatible with X>=2"), not a requirement
# a sentence that is nothing but bounds is a list of dependencies ("Werkzeug >= 3.1, Blinker >= 1.9.")
_BOUNDS_ONLY = lazy(r"\s*(?:[`*]*[A-Za-z][\w.+-]*[`*]*\s*(?:>=|≥)\s*v?\d+(?:\.\d+)*[`*]*\s*(?:,|;|and)?\s*)+\.?\s*")
_CONDITION = lazy(r"\b(?:on|with|for|using|targeting|when|if|under|in|against|of)\s+[`'\"*]*$", re.I)
_DEPENDS_ON = lazy(r"\b(?:depends?|depending|relies|rely|relying)\s+on\s+[`'\"*]*$", re.I)
_HEAD_TRIGGER = lazy(r"(?:Requires?|Required|Requiring|Needs?)\s+")
# "required for use with Acme 1.15": what follows "for" or "by" is what needs it, not what is needed
_MIN_TRIGGER = lazy(r"\b(?:requires?|requiring|required(?!\s+(?:by|for|with))|needs?(?!\s+(?:by|for))|asks?\s+for|"
                    r"needed(?!\s+(?:by|for|with))|at\s+least|"
                    r"(?:minimum|oldest|lowest)(?:\s+\w+){0,3}\s+(?:is|of))\b", re.I)
# ... said after the value: "(Use X 4) by default", "X 4 is now used by default", "X 4 is the default"
_DEFAULT_AFTER = lazy(r"\s*(?:(?P<is>(?:is|are)\s+(?:now\s+)?(?:used\s+|enabled\s+)?by\s+default|(?:is|are)\s+(?:now\s+)?"
                      r"the\s+default)|by\s+default)\b", re.I)
_USE_BEFORE = lazy(r"\b(?:use[sd]?|using)\s+(?:the\s+)?$", re.I)
_USE_HEAD = lazy(r"(?:Use[sd]?|Using)\s+(?=[A-Z])")
_DEFAULT_TRIGGER = lazy(r"\b(?:defaults?\s+to|default\s+(?:is|of)|is\s+now|now\s+is|unchanged\s+at|will\s+be)\b", re.I)
_OR_LATER = lazy(r"^\s*(?:[\w-]+\s+){0,2}(?:or|and)\s+(?:later|newer|higher|above|greater|up)\b|^[\w-]*\+", re.I)
# "or later" alone is no requirement ("runs on FreeBSD 12.0 or later" describes one port); one of these must come first
_SUPPORT_WORDS = lazy(r"\b(?:requir(?:e|es|ed|ing)|needs?|needed|asks?\s+for|minimum|at\s+least|only\s+(?:supports?|runs?))\b",
                      re.I)
# ... or follow, in the same clause: "Toolkit 1.4 or greater is required", "1.5 or newer is all it needs"
_SUPPORT_AFTER = lazy(r"^(?:[^.;:]|\.(?=\d)){0,40}?\b(?:is|are)\s+(?:now\s+)?(?:required|needed|all\s+(?:that\s+)?(?:the\s+)?"
                      r"(?P<who>[\w.+-]+)\s+needs?)\b", re.I)
# "supports Python 3.9 and newer", "is compatible with Python versions from 2.4 to 3.2"
_SUPPORTS = lazy(
    # a feature list's "Compatible with Python 3.10+" opens on its verb; "Support HTTP 308" is a feature
    r"\b(?:supports?|(?i:currently\s+)supporting|supported\s+(?:on|with)|(?i:compatible\s+with)|works\s+(?:on|with)|runs\s+on|installs\s+on|accepts?|targets?|"
    # "The supported Python versions are: CPython 3.11, 3.12" (a list that sentence introduces)
    r"supported\s+(?:[A-Z][\w+.]*\s+)?versions?\s+(?:are|include)\s*:?)\s+"
    r"(?:(?:the\s+)?versions?\s+of\s+)?"
    r"(?P<name>[A-Z][\w+.]*)\s+(?:versions?\s+)?(?P<list>(?:from\s+)?(?:>=\s*)?\d+(?:\.\d+)*(?:\s*(?:(?:,\s*|and\s+)(?P=name)\s*(?:>=\s*)?(?=\d)|"
    r"and\s+newer|and\s+later|and\s+higher|and\s+above|or\s+newer|or\s+later|or\s+higher|up\s+to|through|,\s*and|,|and|to|or|-|–|\+)"
    r"\s*(?:\d+(?:\.\d+)*)?)*)")
# a sentence that introduces a list of what the product supports ("The current version works on:")
_LEAD_IN = lazy(r"\b(?:supports?|supported\s+(?:on|with)|compatible\s+with|works\s+(?:on|with)|runs\s+on|"
                r"supported\s+(?:[\w.+-]+\s+){0,2}versions?\s+(?:are|include))\s*:\s*$", re.I)
# a sentence that introduces a list of raised minimums ("Increased the minimum versions of the
# following dependencies:"), and an item of it that gives one ("Twisted: 18.9.0 → 21.7.0",
# "Pillow (images pipeline): 4.0.0 -> 7.1.0")
_MIN_LEAD_IN = lazy(r"\bminimum\s+(?:required\s+|supported\s+)?versions?\b[^.:]{0,80}:\s*$", re.I)
_ARROW = r"(?P<name>[A-Za-z][\w.+-]*)\s*(?:\([^)]*\))?\s*:\s*v?(?P<old>\d+(?:\.\d+)*)\s*(?:→|->)\s*v?(?P<new>\d+(?:\.\d+)*)(?![\w.])"
_ARROW_ITEM = lazy(rf"^{_ARROW}")
# ... and the item read with it ("Minimum versions increased for these dependencies: Twisted: 18.9.0 → 21.7.0")
_RAISED = lazy(rf"\bminimum\s+(?:required\s+|supported\s+)?versions?\b[^.:]{{0,80}}:\s+{_ARROW}", re.I)
# what makes one version a lower bound: "3.9 and newer", "3.10+", ">= 3.5", "from 2.4 to 3.2"
_OPEN_ENDED = lazy(r"newer|later|higher|above|greater|onwards?|\+|>=|\bfrom\b|\bto\b|\bthrough\b|-|–")
# a list of versions: "3.8", "2.6 and 3.3", "3.7, 3.8, and 3.9" (a serial comma read to the end)
_VERSIONS = r"\d+(?:\.\d+)*(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*\d+(?:\.\d+)*)*"
# ... after a `name` group, which may say its name again before a version: "Docutils 0.18.1 and
# Docutils 0.19"
_NAMED_VERSIONS = r"\d+(?:\.\d+)*(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*(?:(?P=name)\s+)?\d+(?:\.\d+)*)*"
# the newest version supported, as a release adds it: "Add support for Python 3.14", "Test against
# Python 3.15", "Added explicit support for Python 3.11"; and as a note bounds it: "supports
# Python up to 3.13", "tested against Python 3.14 at most"
_ADDS_SUPPORT = lazy(r"\b(?:add(?:ed|s|ing)?|declare[sd]?|introduce[sd]?)\s+(?:official\s+|explicit\s+|initial\s+|"
                     r"full\s+|experimental\s+|preliminary\s+)?support\s+(?:for|of)\s+"
                     rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_VERSIONS})"
                     r"|\b(?:test(?:ed|s|ing)?\s+(?:against|on|with)|official(?:ly)?\s+support(?:s|ed)?(?:\s+for)?)\s+(?!(?:is|are|was|were)\s)(?P<name2>[A-Z][\w+.]*)\s+(?P<list2>\d+(?:\.\d+)+"
                     r"(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*\d+(?:\.\d+)*)*)"
                     # "add Python 3.14 as a supported version", "formally add Python 3.10 support"
                     r"|\badd(?:ed|s|ing)?\s+(?:official\s+)?(?P<name3>[A-Z][\w+.]*)\s+(?P<list3>\d+(?:\.\d+)+)\s+"
                     r"(?=as\s+an?\s+(?:officially\s+)?supported\s+version|support\b(?!\s+(?:for|of|in|to|on|within)\b)|to\s+the\s+(?:list\s+of\s+)?supported\s+versions)",
                     re.I)
# ... and as a release's item says it: "Support Python 3.15", "Support for Python 3.13", "Python 3.15
# support.", "Add official Python 3.14 support", "Add syntactic support for Python 3.15",
# "Python 3.15 is now supported"
_SUPPORT_ITEM = lazy(r"^\W*(?:(?:\[[^\]]{1,40}\]\([^)\s]*\)|[^:\s][^:]{0,39}):\s+)?(?:add(?:ed|s)?\s+)?(?:(?:official|explicit|initial|full|experimental|preliminary|"
                     r"syntactic|basic)\s+)?(?:support(?:s|ed)?\s+(?:for\s+)?(?P<name>[A-Z][\w+.]*)\s+"
                     r"(?P<list>\d+(?:\.\d+)+(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*(?:[A-Z][\w+.]*\s+)?\d+(?:\.\d+)*)*)"
                     r"|(?P<name2>[A-Z][\w+.]*)\s+(?P<list2>\d+(?:\.\d+)+)\s+support(?=\s*(?:[.;:]\s*)?(?:$|[(\[])))"
                     r"|\b(?P<name3>[A-Z][\w+.]*)\s+(?P<list3>\d+(?:\.\d+)+)\s+(?:is|are)\s+now\s+(?:officially\s+|fully\s+)?"
                     r"supported\b", re.I)
# what may follow a version a release adds support for: the sentence's end, a reference, another
# version; not a noun ("support for the Python 3.10 `match/case` syntax" is a feature's); a
# pre-release glued to it is of that version ("support for Python 3.15b1")
_ADDED_ENDS = lazy(r"(?:(?<=\.\d)(?:a|b|rc)\d+|(?<=\.\d\d)(?:a|b|rc)\d+)?\s*(?:$|https?://|[.,;:)\[(]|(?:and|or|is|are|now|in|on|with|to|since|as|support|officially|"
                   r"free-?thread\w*|builds?|alphas?|betas?|release\s+candidates?|pre-?releases?)\b)", re.I)
# a version left open ("3.10+", "3.10 and newer", "3.10 - 3.12"): a range's start
_OPEN_AFTER = lazy(r"\s*(?:\+|(?:or|and)\s+(?:newer|later|higher|above|up)\b|[-–]\s*\d|through\b|to\s+\d|"
                   r"onwards?\b)", re.I)
# a drop scoped to a part of the product: "... support in the Widget backend", "... for the `x` backend"
_IN_PART = lazy(r"\s+(?:support\s+)?(?:in|within|for|from|on)\s+(?:the\s+)?(?:[A-Z][\w.]*[a-z][\w.]*|`[^`]+`)", )
_UP_TO = lazy(r"\b(?P<name>[A-Z][\w+.]*)\s+(?:versions?\s+)?(?:up\s+to|at\s+most)\s+v?(?P<ver>\d+(?:\.\d+)+)"
              r"|\b(?P<name2>[A-Z][\w+.]*)\s+v?(?P<ver2>\d+(?:\.\d+)+)\s+at\s+(?:the\s+)?most\b"
              # "Acme is only tested up to Python 3.12"
              r"|\b(?i:tested|supported|supports?|works?|runs?)\s+(?:(?i:only)\s+)?(?i:up\s+to)\s+"
              r"(?P<name3>[A-Z][\w+.]*)\s+v?(?P<ver3>\d+(?:\.\d+)+)")
# what a dropped version is called before its name: "the end-of-life Python 3.7", "EOL Python 3.4"
_LAPSED = r"(?:the\s+)?(?:(?:end[- ]of[- ]life|eol|legacy|obsolete|unsupported|old(?:er)?)\s+)?"
_DROP_VERB = lazy(r"\b(?:drop(?:ped|s|ping)?|remove[sd]?|removing|end(?:ed|s)?)\s+(?:the\s+)?$", re.I)
# "Drop support for Python 3.8", "Removed support for end-of-life Python 3.9", and as written in
# haste: "Drop support of Python 3.7", "Drop support Python 3.8"
_DROP = lazy(r"\b(?:drop(?:ped|s|ping)?|remove[sd]?|removing|end(?:ed|s)?)\s+(?:the\s+)?support\s+(?:(?:for|of)\s+)?" + _LAPSED +
             rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})", re.I)
# "Drop Python 3.11 support", "Removed Toolkit 0.20 support": the versions before the word "support"
_DROP_AFTER = lazy(r"\b(?:drop(?:ped|s|ping)?|remove[sd]?|removing)\s+(?P<name>[A-Z][\w+.]*)\s+"
                   rf"(?P<list>{_NAMED_VERSIONS})\s+support\b", re.I)
# "Dropped support for Python versions <3.9", "Remove support for all Python versions less than 3.6":
# the versions dropped are those below the one named, which is the oldest supported now
_DROP_BELOW = lazy(r"\b(?:drop(?:ped|s|ping)?|remove[sd]?|removing|end(?:ed|s)?)\s+(?:the\s+)?support\s+for\b"
                   r"[^.;]{0,40}?\b(?P<name>[A-Z][\w+.]*)\s+(?:versions?\s+)?(?:<\s*|(?:less|older|lower|earlier)"
                   r"\s+than\s+|below\s+|prior\s+to\s+)v?(?P<ver>\d+(?:\.\d+)+)", re.I)
# a release's item that drops a versioned name and says no more of it: "Drop Python 3.8 in #1281",
# "Support: Removed Python 3.7." (not "Drop Python 2 compat code", "Remove Python 3.8 from CI")
_DROP_ITEM = lazy(r"^\W*(?:[A-Z][\w ()#,-]{0,30}:\s+)?(?:drop(?:ped|s)?|remove[sd]?)\s+"
                  rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})"
                  r"(?![\d.]*\d)(?=\s*(?:$|\.(?:\s|$)|[;,(]|in\s+#|by\s+@|\[#))", re.I)
# "Support for Python 3.8 has been dropped"
_DROPPED = lazy(r"\bsupport\s+for\s+" + _LAPSED + rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})\s+"
                r"(?:has\s+been|have\s+been|was|were|is|are)\s+(?:now\s+)?(?:dropped|removed)\b", re.I)
# "Support for GEOS 3.1 and GDAL 1.6 has been dropped": several names, each with its versions
_DROPPED_MANY = lazy(rf"\b(?i:support\s+for)\s+(?P<pairs>[A-Z][\w+.]*\s+{_VERSIONS}(?:\s*(?:,\s*and|,|and)\s+[A-Z][\w+.]*\s+"
                     rf"{_VERSIONS})+)\s+(?:has\s+been|have\s+been|was|were|is|are)\s+(?:now\s+)?(?:dropped|removed)\b")
_PAIR = lazy(rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_VERSIONS})")
# "Python 3.7 has been dropped", "Python 3.6 is dropped": a versioned name dropped is its support
_NAME_DROPPED = lazy(rf"\b(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})\s+(?:support\s+)?"
                     r"(?:has\s+been|have\s+been|is|are|was|were)\s+(?:now\s+)?dropped\b")
# an infinitive names an intention, not an outcome: "is taking longer than others to drop Python 2.7 support"
_INTENT = lazy(r"\bto\s+$", re.I)
_SENTENCE_BREAK = lazy(r"[.;:!?]\s+")
# a release item labelled as the project's own CI ("CI: ...", "Travis CI: ...", "[ci] ...")
_CI_LABEL = lazy(r"^\W*(?:[\w ]{0,30}\b(?-i:CI)\b[\w ]{0,12}:|\[ci\])", re.I)


def _last_break(text: str) -> int:
    """Where the last sentence that `text` runs into starts (0 when it holds one)."""
    end = 0
    for end_match in _SENTENCE_BREAK.finditer(text):
        end = end_match.end()
    return end


# a from-to said of the project's own build and test machinery
_CI_WHAT = lazy(r"\b(?:ci|continuous\s+integration|test\s+(?:suite|matrix|runner)s?|tests)\b")
# words that open a clause: what a from-to statement is about comes after the last of them
_CLAUSE = lazy(r"\b(?:because|since|as|when|while|so|and|but|that|which|where|if|after|before|now)\b")
# "Acme no longer supports Python 3.8", "... no longer supports running with Python 3.8", "Acme is
# no longer officially supported on Python 3.3"
_NO_LONGER_SUPPORTS = lazy(r"\b(?:no\s+longer|not\s+any\s*more)\s+(?:officially\s+)?(?:supports?|supported\s+(?:on|with|under))\s+"
                           r"(?:running\s+(?:with|on|under)\s+)?"
                           rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})")
# "Python 2.6 and 3.3 are no longer supported", "Python 3.6 is not supported anymore"
_NO_LONGER = lazy(rf"\b(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})\s+"
                  r"(?:(?:is|are)\s+no\s+longer\s+supported|(?:is|are)\s+not\s+supported\s+any\s*more|"
                  r"(?:isn't|aren't)\s+supported\s+any\s*more)")
# an item of a changelog's "Removed" section that names what went: "Python 3.8 and 3.9 support.",
# "Support for Python 3.7."
_REMOVED_SECTION = lazy(r"^\W*(?:removed|removals?|dropped|removed\s+features?)\W*$", re.I)
_REMOVED_ITEM = lazy(rf"^(?:(?:official\s+)?support\s+for\s+)?(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_NAMED_VERSIONS})"
                     r"(?:\s+support)?\s*\.?$", re.I)
# "0.15.x is the last version supporting Python 2.6, 3.3 and 3.4"
# "... that is supported on FreeBSD 11.x", "... that will run on macOS 10.13 High Sierra"
_LAST = lazy(r"\b(?P<subject>\d+(?:\.\d+)*)(?:\.x)?\s+is\s+the\s+last\s+(?:version|release)\s+"
             r"(?:that\s+(?:will\s+|is\s+)?|to\s+)?(?:support(?:s|ing)?|supported\s+on|runs?\s+on|be\s+supported\s+on)\s+"
             rf"(?P<name>[A-Z][\w+.]*)\s+(?P<list>{_VERSIONS})")
# "the minimum supported version of PostgreSQL is increased from 13 to 14", "upgraded from Unicode 15 to Unicode 17"
_FROM_TO = lazy(r"\b(?P<what>(?:[\w`'*.-]+\s+){1,7}?)(?:is|was|has\s+been|have\s+been|are)?\s*(?:increased|raised|bumped|changed|updated|"
                r"upgraded|decreased|lowered|reduced)\s+from\s+(?:[A-Z][\w+.]*\s+)?v?(?P<old>\d[\d,.]*\d|\d)\s+to\s+"
                r"(?:[A-Z][\w+.]*\s+)?v?(?P<new>\d[\d,.]*\d|\d)", re.I)
# the next change of a chain, after a _FROM_TO: ", and from version 3 to version 4"
_FROM_NEXT = lazy(r"(?:[^.;]|\.(?=\d)){0,40}?\bfrom\s+(?:[A-Za-z][\w+.]*\s+)?v?(?P<old>\d[\d,.]*\d|\d)\s+to\s+"
                  r"(?:[A-Za-z][\w+.]*\s+)?v?(?P<new>\d[\d,.]*\d|\d)")
# the version of what a release bundles or uses: "Upgrade to CLDR 45", "Babel now uses CLDR 46",
# "Core: Use CLDR 49", "This release brings Unicode 16" (a release's notes only)
_USES = lazy(r"(?:^|[:;]\s*|\b(?i:now)\s+|\b(?i:upgrade[sd]?|update[sd]?|bump(?:ed|s)?)\s+to\s+|"
             r"\b(?i:brings|bundles|ships\s+with)\s+)(?:(?i:use[sd]?|uses)\s+)?(?:the\s+)?(?P<name>(?:[A-Z]|[a-z]+[A-Z])[\w+.-]*[\w+])\s+(?:version\s+)?v?(?P<ver>\d+(?:\.\d+)*)"
             r"(?![\w.]*\w)(?!\s*(?:\+|or\s|and\s|support|compat))")
# the version a release vendors of a dependency, named in any case: "Updated vendored packaging
# version to 26.3", "Updated vendored `packaging` version from 23.0 to 23.1", "Bump vendored
# version of `packaging` to 23.0", "Update the bundled acme to version 2.1"
_BUNDLED_NAME = r"[`'*]*(?P<name>[A-Za-z][\w+.-]*[\w+])[`'*]*\s+"
_TO_VERSION = r"(?:(?i:from)\s+v?\d+(?:\.\d+)*\s+)?(?i:to)\s+(?:(?i:version)\s+)?v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)"  # "[from 1.2] to 1.3"
_VENDORED = lazy(r"\b(?i:upgrade[sd]?|update[sd]?|bump(?:ed|s)?|refresh(?:e[sd])?)\s+(?:the\s+)?"
                 r"(?i:vendored|bundled|embedded)\s+(?:(?i:version)\s+of\s+)?" + _BUNDLED_NAME +
                 r"(?:(?i:version)\s+)?" + _TO_VERSION)
# ... and a release's "Update libtoolkit from 1.33.1 to 1.34.5": a name, then both versions, dotted
_UPDATED_FROM_TO = lazy(r"\b(?i:update[sd]?|upgrade[sd]?|bump(?:ed|s)?)\s+(?:the\s+)?" + _BUNDLED_NAME +
                        r"(?:(?i:version)\s+)?(?i:from)\s+v?\d+(?:\.\d+)+\s+(?i:to)\s+v?(?P<ver>\d+(?:\.\d+)+)(?![\w.]*\w)")
# ... and said of it: "Bundled acme is updated to 4.3.5", "The vendored acme version has been bumped to 2.1"
_VENDORED_PASSIVE = lazy(r"\b(?i:vendored|bundled|embedded)\s+" + _BUNDLED_NAME + r"(?:(?i:version)\s+)?"
                         r"(?i:is|has\s+been|was|got)\s+(?:(?i:now)\s+)?(?i:updated|upgraded|bumped|refreshed)\s+" + _TO_VERSION)
# "The acme wheels bundle libtoolkit 4.3.4", "Acme ships with Toolkit 2.1": a bundled thing's version
# (a dotted one: "bundles 3 fonts" is a count)
_BUNDLES = lazy(r"\b(?:bundles?|ships?\s+with|vendors)\s+(?:the\s+|a\s+)?" + _BUNDLED_NAME +
                r"(?:(?i:version)\s+)?v?(?P<ver>\d+\.\d+(?:\.\d+)*)(?![\w.]*\w)")
_NAMES_RELEASE = lazy(rf"^\W*{_NAME}\s+v?\d+(?:\.\d+)*\s+(?:now\s+)?(?:uses|bundles|brings|ships\s+with|includes)\b")
# "The minimum Python version is now 3.10", "the minimum supported version of PostgreSQL is 14",
# "The minimum supported Python is 3.9", "The minimum Toolkit dependency is updated to ``4.3.1``"
_MIN_IS = lazy(r"\b(?:minimum|oldest|lowest)\s+(?:supported\s+|required\s+)?(?:(?!(?:supported|required)\s)(?P<name>[A-Z][\w+.]*)\s+(?:version|dependency|requirement)|"
               r"version\s+of\s+(?P<name2>[A-Z][\w+.]*)|(?P<name3>(?-i:[A-Z][\w+.]*))(?=\s+(?:is|has\s+been|becomes?)\s))\s+"
               r"(?:(?:that\s+)?(?:the\s+|this\s+)?(?P<who>[\w.+-]+)\s+(?:supports|accepts|requires|needs|allows)\s+)?"
               r"(?:is|has\s+been|becomes?)\s+(?:now\s+)?"
               r"(?:(?:raised|increased|bumped|updated|upgraded)\s+to\s+)?[`'*]*v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)", re.I)
# "Increased minimum yarl version to 1.25.1", "Bump the minimum required version of Toolkit to 3.0"
# ... and, said after the name's version, without it: "compatibility with Toolkit 2.0 and
# bumped minimum supported version to 1.4" (the name is the nearest versioned one before)
_MIN_RAISED = lazy(r"\b(?:increas|rais|bump|updat|upgrad)\w*\s+(?:the\s+)?(?:minimum|lowest|oldest)\s+"
                   r"(?:supported\s+|required\s+)?(?:(?!(?:supported|required)\s)(?P<name>[A-Z][\w+.-]*)\s+version|"
                   r"version\s+of\s+(?P<name2>[A-Z][\w+.-]*)|(?P<back>(?<=\s)version))"
                   r"\s+to\s+v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)", re.I)
_NAMED_BEFORE = lazy(r"\b(?:with|for|on|of)\s+(?P<name>[A-Z][\w+.-]*)\s+v?\d+(?:\.\d+)*(?![\w.]*\w)(?=[^.;]{0,60}$)")
# a minimum said without a name, in a section named after one thing: "Toolkit" over "Minimum
# required version is now 4.3.0+." (a release's notes that give each dependency a heading)
_UNNAMED_MIN = lazy(r"^(?:the\s+)?(?:minimum|oldest|lowest)\s+(?:supported\s+|required\s+)?version\s+"
                    r"(?:is|has\s+been|becomes?)\s+(?:now\s+)?(?:(?:raised|increased|bumped|updated)\s+to\s+)?"
                    r"[`'*]*v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)", re.I)
_ONE_NAME = lazy(r"[`'*]*(?P<name>[A-Za-z][\w+.-]*[\w+])[`'*]*")
# the words such a heading uses for the section's kind, or the document's parts, not for what it is about
_SECTION_KINDS = frozenset("""dependencies dependency requirements requirement prerequisites compatibility support
supported platforms platform versions version minimum minimums runtime packaging""".split()) | DOC_WORDS | STOPWORDS
# a dependency raised to a version "or later", its name in any case: "Update the ``toolkit``
# dependency to 4.3.1 or later", "Bump the toolkit requirement to 2.0+" (without "or later" the
# version may be a pin, not a minimum)
_DEP_RAISED = lazy(r"\b(?i:updat|upgrad|bump|rais|increas)\w*\s+(?i:the\s+)?[`'*]*(?P<name>[A-Za-z][\w+.-]*[\w+])[`'*]*\s+"
                   r"(?i:dependency|requirement)\s+(?i:to)\s+[`'*]*v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)[`'*]*"
                   r"(?=\+|\s+(?i:or\s+(?:later|newer|higher|above)))")
# "The newest Python Acme officially supports is 3.13", "the latest supported Python version is 3.14"
_MAX_IS = lazy(r"\b(?i:newest|latest|highest|maximum)\s+(?:(?i:supported)\s+)?(?P<name>[A-Z][\w+.]*)(?:\s+(?i:version))?\s+"
               r"(?:(?:that\s+)?(?P<who>[\w.+-]+)\s+(?:officially\s+|fully\s+)?(?:supports|accepts|runs\s+on)\s+)?"
               r"(?:is|becomes)\s+(?:now\s+)?v?(?P<ver>\d+(?:\.\d+)+)(?![\w.]*\w)")
# "Toolkit 2.0.0 is now the minimum required version", "Toolkit 3.0 is the oldest version the tool accepts",
# "use Toolkit 3.0 (the lowest version the tool supports)"
_IS_MIN = lazy(rf"\b(?P<name>{_NAME})\s+v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)(?:\s+is\s+(?:now\s+)?|\s*\(\s*)the\s+"
               r"(?:minimum|oldest|lowest|earliest)\b(?:\s+(?:supported|required))?(?:\s+\w+)?\s+version\b"
               r"(?:\s+(?:that\s+)?(?P<who>[A-Za-z][\w+.-]*)\s+(?:accepts|supports|requires|allows|runs\s+on|works\s+with))?")
# a name among the words that say what changed: "The jQuery library embedded in the admin",
# "The default OpenLayers library version", "Select2 library" (a capital inside, or a digit)
_NAME_IN = lazy(r"(?<![\w.-])([A-Za-z]+[A-Z][\w.+-]*|[A-Z][A-Za-z]*\d[\w.+-]*|[a-z]+[A-Z]\w*)(?![\w.-])")
# a measure a release note says changed: "the maximum stack depth for ...", "the default timeout of ..."
_QUANTITY = lazy(r"\b(?P<rel>maximum|minimum|default)\s+[`'\"*]*(?P<qty>(?:[a-z][\w-]*[`'\"*]*\s+){0,2}?[a-z][\w-]*)[`'\"*]*"
                 r"\s+(?:for|of|in|on)\b", re.I)
_UNMARKED = lazy(r"[`'\"*]")
_NO_QUANTITY = frozenset("value values version versions number setting settings".split())  # says not what
_PLAN = lazy(r"\b(?:will|intend(?:s|ed)?|plan(?:s|ned)?|expect(?:s|ed)?|anticipat\w*|going\s+to|future|propos\w+)\b", re.I)
_PAST = lazy(r"\b(?:previous(?:ly)?|prior\s+(?:to|versions?)|formerly|used\s+to|earlier\s+versions?|older\s+versions?)\b", re.I)
_NEGATION = lazy(r"\b(?:no\s+longer|not|n't|never|without)\b", re.I)
ROLES = {"server": "server", "servers": "server", "server-side": "server", "client": "client", "clients": "client",
         "client-side": "client", "bootstrap": "bootstrap", "bootstrapping": "bootstrap"}
_ROLE_WORD = lazy(r"\b(?:server-side|client-side|servers?|clients?|bootstrap(?:ping)?)\b", re.I)
# names that are sentence furniture, not products: function words, the parts of a document a
# number labels ("Listing 6-3", "Example 2", "Appendix 1"), and the labels of a reference number
# (an issue, a change list, a standard: "CL 1234", "RFC 9110")
_NOT_NAMES = frozenset("""as in since before after until from with the of and or to for by on at if when this that these
those it its version versions release releases issue issues section chapter figure table page step phase
listing example exercise appendix footnote equation slide lesson line
cl pr bug part level rfc pep iso fips ecma ieee see also note changed new added fixed""".split())
# a lowercase name run into a number ("abc1", "py3") is a version tag, not a product's name
_VERSION_TAG = lazy(r"[a-z]{1,3}\d+")  # "py3", "go1"; "psycopg2" and "boto3" are names
# words before "requires" that mean "the product itself": anything else names what requires the value
_SCOPE_SKIP = frozenset("""now also still only will to does do did that which so and then currently thus therefore
it we this release releases version versions support for on of the a an is be being further additionally last
intend intends plan expect require requires required requiring update updates updated bump bumps bumped
itself are officially fully formally explicitly actively generally primarily mainly has have had add adds added
make makes made current latest newest present specify specifies specified declare declares declared wheel wheels""".split())  # "the current version of X" is X
# what "this" or "the" may name and still be the product ("this release requires Python 3.9",
# "the oldest version the framework supports")
_THIS_WHOLE = frozenset("""release version project package library module tool toolkit framework distribution series
software product core""".split())  # a changelog's "Core: Use CLDR 49" is the product's own
# a list item that is only a versioned name, open-ended: "Python 3.10+ or PyPy 3", "cPython 3.11 and higher"
_BARE_ITEM = lazy(rf"^(?P<value>(?P<name>{_NAME})\s+v?(?P<ver>\d+(?:\.\d+)*)\s*(?:\+|(?:and|or)\s+(?:higher|newer|later|above|greater|up)))"
                  r"(?:\s*(?:,|or|and)\s+[\w. +-]{1,30})?\s*\.?$")
# what a team's note says a product accepts of a dependency, in the words notes use (lint weighs
# it against the oldest version the product's documents accept): "we pin `toolkit==0.19`, which
# Acme still accepts", "`toolkit>=2.1`, the oldest Toolkit that Acme accepts", "the image's
# Toolkit 7.68 (the distribution's) is recent enough", "Toolkit 3.6 is all Acme needs",
# "Toolkit 2.2 LTS is still supported"
# (a lowercase name with a pin's operator or a dotted version: "only 3" names nothing)
_LOWER_NAME = r"[a-z][\w+.-]*[\w+]"  # a name in lowercase: "toolkit", "py-toolkit", "toolkit2"
_NOTED_VERSION = (r"[`'*]*(?P<name>" + _NAME + "|" + _LOWER_NAME + r"(?=[`'*]*\s*(?:==|>=|~=|v?\d+\.\d)))[`'*]*"
                  r"\s*(?:==|>=|~=|\s)\s*v?(?P<ver>\d+(?:\.\d+)*)(?![\w.]*\w)[`'*]*(?:\s+LTS)?(?:\s*\([^()]{0,40}\))?")


def _who(n: int) -> str:
    return rf"(?P<who{n}>{_NAME}|{_LOWER_NAME})"


_ACCEPTED = lazy(
    _NOTED_VERSION + r"(?i:"
    r",\s+which\s+(?:the\s+)?(?-i:" + _who(1) + r")\s+(?:still\s+|also\s+|now\s+|officially\s+)?(?:accepts|supports|works\s+with|runs\s+on)\b|"
    r",\s+the\s+(?:oldest|lowest|earliest)\s+(?:[\w.+-]+\s+)?(?:that\s+)?(?-i:" + _who(2) + r")\s+(?:still\s+)?(?:accepts|supports|allows|works\s+with|runs\s+on)\b|"
    r"\s+(?:is|are)\s+(?:still\s+)?(?:(?:recent|new)\s+enough\b|supported\b(?:\s+by\s+(?-i:" + _who(4) + r"))?)|"
    r"\s+is\s+all\s+(?:that\s+)?(?-i:" + _who(3) + r")\s+(?:needs|requires)\b)")
# "Nothing newer than Python 3.13 is supported by Acme": the newest, said by what is not
_NOTHING_NEWER = lazy(r"\b(?i:nothing|none|no\s+(?:versions?|releases?))\s+(?i:newer|later|higher|above)\s+than\s+"
                      rf"(?P<name>{_NAME})\s+v?(?P<ver>\d+(?:\.\d+)+)(?![\w.]*\w)"
                      r"(?:[^.;]{0,30}?\b(?i:supported|accepted)\s+by\s+" + _who(0) + ")?")
# a fact needs one of these words; most sentences have none, and skip the patterns
HINT = lazy(r"requir|least|minimum|oldest|lowest|default|later|newer|higher|above|\+|only support|only run|support|"
            r"compatible|>=|>|increased|raised|bump|vendored|upgraded|changed|updated|decreased|lowered|needs?\b|accept|"
            r"works (?:on|with)|runs on|installs on|targets?\b|dropped|upgrade|update|brings|bundle|embedded|ships with|vendors|tested|test against|"
            r"up to|at most|enough|asks? for",
            re.IGNORECASE)
DIGIT = lazy(r"\d")


def _by_first_character(words: str) -> str:
    """An alternation of words regrouped by the character each starts with: "abc|abd|x" as
    "a(?:bc|bd)|x". A search tries one group at a character rather than every word; a group
    keeps its words in their order, so each match is the same."""
    alternatives: list[str] = []
    depth = start = 0
    for i, c in enumerate(words + "|"):
        if c == "(" and words[i - 1 : i] != "\\":
            depth += 1
        elif c == ")" and words[i - 1 : i] != "\\":
            depth -= 1
        elif c == "|" and depth == 0:
            alternatives.append(words[start:i])
            start = i + 1
    groups: dict[str, list[str]] = {}
    for alternative in alternatives:
        first = alternative[:2] if alternative.startswith("\\") else alternative[:1]
        assert alternative[len(first) : len(first) + 1] not in ("?", "*", "+", "{"), alternative  # a plain first character
        groups.setdefault(first, []).append(alternative[len(first):])
    return "|".join(first + (f"(?:{'|'.join(rest)})" if rest != [""] else "") for first, rest in groups.items())


# HINT for lowercased text: without IGNORECASE the search skips to the characters its words
# start with (a sixth of the time), and tries only the words that start with each; `has_hint`
# is what to ask
_HINT_LOW = lazy(_by_first_character(HINT.pattern.lower()))

# a column of a support table: "Supported Versions", "Python versions", "Version"
_VERSION_COLUMN = lazy(r"\bversions?\b", re.I)
_CELL_NOTE = lazy(r"\([^)]*\)|\[[^\]]*\]")  # "3.12 (added in 4.2.8)": the note is no version listed
_CELL_VERSIONS = lazy(r"(?<![\w.])v?\d+(?:\.\d+)*(?:\.[xX*])?(?![\w.]*[A-Za-wyz])")
# a document whose words are mostly package specifiers is a requirements list (a docs build's
# requirements.txt), whose pins are its build's, not the product's
_SPEC = lazy(r"[A-Za-z][\w.\-\[\],]*\s*(?:===|==|>=|<=|~=|!=|>|<)\s*[\w.*+!-]+|-[a-zA-Z]|--[\w-]+|[\w./-]+\.(?:txt|in|cfg|toml)|#.*")
_SPEC_OPERATOR = lazy(r"[\w\]](?:===|==|>=|<=|~=|!=)\s*\d")
# --- a default that is a word, not a number ("choice" facts): what it is set to by name
# a value as written: a code span, a quoted or emphasised word, else one bare token
_CHOICE_VALUE = r"(?:``[^`]{1,80}``|`[^`]{1,80}`|'[^'\s][^']{0,60}'|\"[^\"\s][^\"]{0,60}\"|\*[^*\s][^*]{0,60}\*|[A-Za-z_][\w.-]*\w|[A-Za-z])"
# what the default is of: one to seven words or code spans ("upgrade strategy", "`junit_family`",
# "DBAPI driver for the PostgreSQL dialect")
_CHOICE_WHAT = r"(?:`{1,2}[^`]{1,60}`{1,2}|\*[^*\s]{1,40}\*|[A-Za-z][\w-]*)(?:\s+(?:`{1,2}[^`]{1,60}`{1,2}|\*[^*\s]{1,40}\*|[A-Za-z][\w-]*)){0,6}?"
_CHOICE_OF = r"(?:(?:value\s+)?(?:of|for)\s+(?:the\s+)?)?"
# "Switch the default upgrade strategy to be 'only-if-needed'", "Changed the default X from A to B"
_CHOICE_SET = lazy(
    rf"\b(?:switch(?:ed|es)?|chang(?:e|ed|es)|set|sets|made|make|makes)\s+the\s+default\s+{_CHOICE_OF}(?P<what>{_CHOICE_WHAT})"
    rf"\s+(?:value\s+)?(?:from\s+(?P<old>{_CHOICE_VALUE})\s+)?to\s+(?:be\s+|use\s+)?(?P<new>{_CHOICE_VALUE})", re.I)
# "The default renderer now is `X`", "The default value for `f` has changed to `x`", "pip's default
# upgrade strategy is eager" (a state: how a note says it), "The default X will change to Y" (a plan)
_CHOICE_IS = lazy(
    rf"(?:\b(?P<whose>the|its|their|our|your|[A-Za-z][\w.-]*['’]s)\s+|^\W*)default\s+{_CHOICE_OF}(?P<what>{_CHOICE_WHAT})"
    r"\s+(?:option\s+|setting\s+|value\s+)?(?:(?P<change>(?:has\s+(?:been\s+)?|was\s+|is\s+|will\s+be\s+)?(?:changed|switched)"
    rf"|will\s+change)\s+(?:from\s+(?P<old>{_CHOICE_VALUE})\s+)?to|(?P<now>is\s+now|now\s+is|has\s+become|became|will\s+be)|(?P<is>is))"
    rf"\s+(?P<new>{_CHOICE_VALUE})", re.I)
# "`utf8mb4` is now the default character set"
_CHOICE_BECOMES = lazy(rf"(?P<new>{_CHOICE_VALUE})\s+is\s+now\s+the\s+default\s+(?P<what>{_CHOICE_WHAT})(?=\s*(?:[.;:,(]|$|\s+(?:for|in|on|when|if)\b))", re.I)
# a setting's value written as code, said to be the default: "`language_level=3` is now the
# default", "`binding=True` is the default"
_CHOICE_ASSIGNED = lazy(r"`{1,2}(?P<what>[A-Za-z_][\w.-]*)\s*=\s*(?P<new>[^`\s=]{1,40})`{1,2}\s+is\s+"
                        r"(?P<now>now\s+)?the\s+default\b(?!\s+(?:for|in|on|when|if)\b)", re.I)
# what a setting or a function named in code defaults to: "`Request.max_upload_size` defaults
# to 500kB instead of unlimited" (a change), "`hash_password` uses bcrypt by default",
# "`max_upload_size` is unlimited by default" (a state); a figure with its unit is a value here
_CODE_WHAT = r"`{1,2}[^`]{1,60}`{1,2}"
_CHOICE_FIGURE = r"(?:\d[\d,.]*(?:\s?(?:[kKMGT]i?B|bytes?|ms|seconds?|minutes?|hours?|days?))?(?![\w.,]))"
_CHOICE_DEFAULTS = lazy(
    rf"(?P<what>{_CODE_WHAT})(?:\s*,\s*which)?\s+(?:(?P<now>now)\s+)?(?:defaults\s+to\s+(?P<new>{_CHOICE_VALUE}|{_CHOICE_FIGURE})"
    rf"(?:\s+instead\s+of\s+(?P<old>{_CHOICE_VALUE}|{_CHOICE_FIGURE}))?|(?:is|are|uses)\s+(?P<new2>{_CHOICE_VALUE}|{_CHOICE_FIGURE})"
    r"\s+by\s+default\b)", re.I)
# "its `repeat` init kwarg changed its default value from `False` to `True`": a setting named in
# code, what kind of setting it is, then its change
_CHOICE_ITS = lazy(
    rf"(?P<what>{_CODE_WHAT})(?:\s+(?:init\s+|config\s+|keyword\s+)?(?:kwarg|argument|parameter|option|setting|attribute))?"
    rf"\s+(?:has\s+)?changed\s+its\s+default(?:\s+value)?\s+(?:from\s+(?P<old>{_CHOICE_VALUE})\s+)?to\s+(?P<new>{_CHOICE_VALUE})",
    re.I)
_OBJECT_BEFORE = lazy(r"\b(?:of|for|in|on|from|to|with|by|between|about|against|than)\s*$", re.I)
_CHOICE_NOT_WHAT = frozenset("value values version versions number setting settings option options one is be".split())
# a bare word is a value where it ends its clause ("is eager: ..."), not where the sentence goes on
# ("is fine for development"); a name spelled as code ("only-if-needed", "KeyValueRenderer") anywhere
_CHOICE_END = lazy(r"\s*(?:[.;:,()]|$|\s+(?:by\s+default|instead|now)\b)")
# a case after the value narrows the default to it ("... to UTF-8 when loading .env files"); "if
# nothing is configured" says what a default is, and leaves it whole
_CHOICE_CASE = lazy(r"[`'\"*]*\s+(?:when|if|while|whenever)\b(?![^.;:]{0,40}?(?:\bno\b|\bnot\b|n't\b|\bnothing\b))",
                    re.I)
_CODE_LIKE = lazy(r"[-_.\d]|[a-z][A-Z]|^[A-Z]{2,}$")
# the clause a default is stated in opens with a condition ("When using X, the default ...",
# "(where `x` is False by default)"): the default of that case, not the default. A condition of
# absence ("If omitted, the default is 5", "When no timeout is given") states the default itself
_CASE_OPENS = lazy(r"(?:^|[(;:]|\*\*|\])\s*(?:when|if|where|whenever|for\s+projects?)\b(?P<rest>[^.;:()]*)$", re.I)
_ABSENT = lazy(r"\b(?:no|not|n't|nothing|none|omit\w*|unset|unspecified|missing|absent|empty|otherwise)\b", re.I)


def _case_before(sentence: str, at: int) -> bool:
    """Whether the clause holding `at` opens with a condition other than absence (see _CASE_OPENS)."""
    m = _CASE_OPENS.search(_mask_spans(sentence), 0, at)  # a name's dots end no clause
    return m is not None and not _ABSENT.search(m.group("rest"))


def choice_key(value: str) -> str:
    """How two statements of a word value are compared: marks, a call's parentheses and a module
    path dropped, case folded, and the words run together ("`structlog.dev.ConsoleRenderer()`"
    and "ConsoleRenderer" agree, and so do "only-if-needed" and "only if needed")."""
    text = value.strip("`'\"*“”‘’ ").rstrip(".")
    text = re.sub(r"\(.*\)$", "", text).strip()
    if re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+", text):
        text = text.rsplit(".", 1)[-1]
    key = re.sub(r"[\s_-]+", "", text.lower())
    return _SWITCH_STATES.get(key, key)


# a switch's state, however it is said: a note's "`x` is off by default" agrees with "`x` now
# defaults to `False`"
_SWITCH_STATES = {"on": "true", "enabled": "true", "yes": "true", "off": "false", "disabled": "false", "no": "false"}


def choice_value(value: str) -> tuple[int, ...]:
    """A word value as a value tuple: (-1, a checksum of its choice_key). No version starts below
    zero, so a word never agrees with a version, and two words agree (facts.compatible) only when
    their keys are the same."""
    return (-1, zlib.crc32(choice_key(value).encode("utf-8")) & 0x7FFFFFFF)


def is_choice(f: Fact) -> bool:
    return f.key[0] == "choice"


def _choice_ok(sentence: str, m: re.Match[str], group: str) -> str | None:
    """The value a match read, as written without its marks, or None when it is no value: a
    stop word, or a bare word the sentence goes on after."""
    raw = m.group(group)
    if raw is None:
        return None
    text = raw.strip("`'\"*")
    if text.lower() in ("on", "off") and re.match(r"\s+by\s+default\b", sentence[m.end(group):], re.I):
        return text  # a switch's state ("`X` is off by default"), though a stop word elsewhere
    if not text or text.lower() in STOPWORDS or '"' in text:
        return None  # a value with quote marks in it would open the timeline's quote of its sentence
    if raw[0] not in "`'\"*" and not _CODE_LIKE.search(text) and not _CHOICE_END.match(sentence, m.end(group)):
        return None
    return text


def _choice_subject(what: str) -> str | None:
    """The key of what a default is of: marks and articles dropped, case folded."""
    words = [w for w in re.sub(r"[`*]", "", what).split() if w.lower() not in ARTICLES]
    if words and words[0].lower() in ("for", "of"):
        words = words[1:]  # "the default for the HTML writer"
    while words and words[-1].lower() in _CHOICE_NOT_WHAT:
        words.pop()
    if not words or words[0].lower() in _CHOICE_NOT_WHAT or words[-1].lower() in STOPWORDS:
        return None
    return " ".join(words).lower()


# "Default: ``180``" under the setting a reference describes (`.. confval:: name`, a section named for it)
_STATED_DEFAULT = lazy(r"^\s*Default(?:\s+value)?\s*[:=]\s*(?P<value>.+?)\.?\s*$", re.I)
# a setting's name: dotted or joined words, a constant, an option, or one lowercase word as code
# names it (`.. confval:: language`); "Timeouts" or "Build options" name a part of a page
_SETTING_NAME = lazy(r"[A-Za-z_][\w.-]*[_.-][\w.-]*|[A-Z][A-Z0-9]{2,}|--?[a-z][\w-]*|[a-z][a-z0-9]{2,}")


def atomic_value(text: str) -> str | None:
    """A default as one word, number or code span ("``180``", "True", "`.mypy_cache`"), marks
    dropped and an on/off word spelled as a boolean; None for a phrase ("the asyncio reactor"),
    which says a value in words a comparison cannot weigh."""
    text = text.strip()
    bare = text.strip("`'\"“”‘’")
    if bare != text and re.fullmatch(r"[\w.:/+-]+", bare):
        text = f"`{bare}`"  # marks inside marks ("`'``pkg.Field``'`", a quoted name as code): the name
    code = re.match(r"^(`{1,2})([^`]+)\1", text)
    value = code.group(2).strip() if code else text.strip("'\"*“”‘’ ").rstrip(".,;:")
    if not value or (not code and (" " in value or not re.fullmatch(r"[\w.:/+-]+", value))):
        return None
    low = value.lower()
    return "true" if low in ("true", "on", "enabled", "yes") else "false" if low in ("false", "off", "disabled", "no") \
        else value


def _stated_default(doc: Statements, subject: str, sentence: str, line: int) -> list[Fact]:
    """A reference's "Default: ``180``" under the setting it describes: the setting's default as
    the documentation states it now (a note that says another value is stale, lint)."""
    m = _STATED_DEFAULT.match(sentence)
    name = subject.strip("`* ")
    if m is None or doc.profile.kind != "reference" or not _SETTING_NAME.fullmatch(name):
        return []
    value = atomic_value(m.group("value"))
    key = _choice_subject(f"`{name}`")
    if value is None or key is None:
        return []
    shown = m.group("value").split(" (", 1)[0].strip().strip("`")  # as written, its fallback left out
    if len(shown) > 2 and shown[0] == shown[-1] and shown[0] in "\"'":
        shown = shown[1:-1]  # a string's value, as a release's words give it ("changed to `"x"`": x)
    return [Fact(("choice", key, ""), choice_value(value), shown, False, None, doc.path, sentence, line, None,
                 doc.series)]


_HEADING_NAME = lazy(r"`([^`\s]+)`|([A-Za-z]\w*[_.][\w.]*\w|[A-Z][A-Z0-9_]{2,})")


def _heading_name(heading: str) -> str:
    """The setting a section is named for, where its heading is that name alone: as code
    ("`render_timeout`"), or spelled as only a name is ("RENDER_TIMEOUT", "render.timeout"),
    else ""."""
    m = _HEADING_NAME.fullmatch(heading.strip())
    return (m.group(1) or m.group(2)) if m else ""


def _within_setting(facts: list[Fact], subject: str | None) -> list[Fact]:
    """Defaults said in the description of a setting, of a word its name ends with ("The default
    theme is now 'alabaster'" under `.. confval:: html_theme`): that setting's."""
    name = (subject or "").strip("`* ")
    if not facts or not name or not _SETTING_NAME.fullmatch(name):
        return facts
    words = re.split(r"[_.\s-]+", name.lower())
    key = _choice_subject(f"`{name}`")
    out = []
    for f in facts:
        said = f.key[1].split()
        if key and f.key[0] == "choice" and not f.key[2] and f.key[1] != key and words[-len(said):] == said:
            f = replace(f, key=(f.key[0], key, f.key[2]))
        out.append(f)
    return out


def _on_title(doc: Statements) -> str:
    """The role of "it" in a document whose title names no release: what the document is about,
    by its title's first words ("on team runbook"), so two projects' notes never meet."""
    return "on " + " ".join(re.findall(r"[a-z0-9+#]+", doc.title.lower())[:4])


# another "to" and a value right after a default's value, ending the clause: the value said last
_TO_AGAIN = lazy(rf"\s+to\s+(?:be\s+)?(?P<v>{_CHOICE_VALUE})(?=\s*(?:$|[.,;:)]|\s+instead\b|\s+(?:in|for|when|since|from)\b))", re.I)


def _choices(doc: Statements, sentence: str, line: int, release: str | None, date: str | None,
             product: str | None) -> list[Fact]:
    """The word defaults a sentence states: a change ("Switch the default X to Y", "The default X
    is now Y", "Y is now the default X") or, in a reference page or a note, the default as it is
    ("The default X is Y")."""
    out: list[Fact] = []
    plan = bool(_PLAN.search(sentence))
    if _PAST.search(sentence):
        return out
    spans: list[tuple[int, int]] = []
    for pattern in (_CHOICE_SET, _CHOICE_IS, _CHOICE_BECOMES, _CHOICE_DEFAULTS, _CHOICE_ITS, _CHOICE_ASSIGNED):
        for m in pattern.finditer(sentence):
            if any(a <= m.start() < b for a, b in spans):
                continue
            subject = _choice_subject(m.group("what"))
            value_group = "new" if m.group("new") is not None else "new2"  # _CHOICE_DEFAULTS' "is X by default"
            # a value written inside the code that names its setting is a value as it stands
            new = m.group("new") if pattern is _CHOICE_ASSIGNED else _choice_ok(sentence, m, value_group)
            later = _TO_AGAIN.match(sentence, m.end(value_group)) if new is not None and pattern is not _CHOICE_ASSIGNED else None
            if later is not None:
                # "changes the default of the `x` keyword argument to `Client` to `False` instead of
                # `None`": the first "to" was the subject's ("argument to `Client`"), the last is the value
                new = _choice_ok(sentence, later, "v")
            if pattern is not _CHOICE_SET and "which" not in m.group(0) and _OBJECT_BEFORE.search(sentence, 0, m.start()):
                # "The `label` attribute of `Widget` now defaults to ...", "Compatibility between
                # the default behavior and X is now improved": the default is not the subject
                continue
            if pattern is _CHOICE_DEFAULTS and subject is not None:
                subject = subject.rsplit(".", 1)[-1]  # "`Request.max_upload_size`": the setting's own name
            if subject is None or new is None or (product and subject == product):
                continue
            if _NEGATION.search(sentence[m.start(value_group) - 6 : m.start(value_group)]):
                continue
            if _CHOICE_CASE.match(sentence, m.end(value_group)):
                continue  # "the default encoding to UTF-8 when loading X": the default of one case
            if _case_before(sentence, m.start()):
                continue  # "When using X, the default is Y", "(where `x` is False by default)": one case's
            groups = m.groupdict()
            old = _choice_ok(sentence, m, "old") if groups.get("old") else None
            if pattern is _CHOICE_DEFAULTS or pattern is _CHOICE_ASSIGNED:
                changes = bool(groups.get("old") or groups.get("now"))
            else:
                changes = pattern is not _CHOICE_IS or bool(groups.get("change") or groups.get("now"))
            if changes and release is None and doc.profile.kind == "reference":
                # a reference page says how things are: "this changes the default address" there
                # is what an option does, not a release's change (a "Changed in version" note
                # carries its release)
                continue
            whose = groups.get("whose") or ""
            scope = ""
            if pattern is _CHOICE_SET:
                # who changed it, said before the verb: "`asgiref` version 3.3.0 changed the default ..."
                scope = _scope(sentence[: m.start()], product)
            elif whose and whose.lower() not in ("the", "its", "their", "our", "your"):
                scope = entity(re.sub(r"['’]s$", "", whose)) or ""
                if product and scope == product:
                    scope = ""
            elif not product and doc.profile.kind != "release" and not changes:
                # a note's "the default X is Y" is about what the note is about (see _requirements)
                scope = _on_title(doc)
            spans.append((m.start(), m.end()))
            text = f"{new} (was {old})" if old else new
            out.append(Fact(("choice", subject, scope), choice_value(new), text, plan,
                            release if changes or doc.profile.kind == "release" else None, doc.path, sentence, line,
                            date, doc.series, "from" if changes else "", choice_value(old) if old else ()))
    return out


# a title that says the document is a release's notes, a changelog or a migration guide
_RELEASE_TITLE = lazy(r"\b(?:change\s*log|changes|history|news|release\s+notes?|what['’]?s\s+new|unreleased|"
                      r"announce\w*|migrat\w*|upgrad\w*|porting)\b", re.I)


def has_hint(text: str, release: bool = False) -> bool:
    """HINT.search(text), asked of the text lowercased; in a release's notes "use" is one too
    ("Core: Use CLDR 49": the version a release bundles)."""
    low = text.lower()
    return _HINT_LOW.search(low) is not None or (release and "use" in low)


_LABELS = {"min": "minimum", "default": "default", "value": "version", "supported": "supported", "max": "newest"}


@dataclass(frozen=True)
class Fact:
    key: tuple[str, str, str]  # (relation, entity, role): ("min", "macos", ""), ("default", "tls", "server")
    value: tuple[int, ...]  # the bound or the value; for a drop, the highest version dropped; for a list, its oldest
    value_text: str  # as written ("macOS 10.15 Catalina", "Python 3.9 and newer")
    plan: bool
    release: str | None  # the release it belongs to, as written ("3.1.0", "2.0rc1"); ordered by release_key
    source: str  # raw path
    sentence: str
    line: int
    date: str | None = None  # its section's (or document's) date
    series: str = ""  # the product line whose releases order it (products.py)
    change: str = ""  # "" states the value; "drop" and "last" end support; "from" replaces `old`
    old: tuple[int, ...] = ()  # what a "from A to B" replaced
    newest: tuple[int, ...] = ()  # a list of versions ("3.10, 3.11, 3.12"): the newest it lists

    @property
    def release_key(self) -> tuple[Any, ...] | None:
        """The lexicon's order of its release ("2.0rc1" before "2.0"); None when it names none."""
        return version_key(self.release) if self.release else None

    def to_json(self) -> list[Any]:
        return [list(self.key), list(self.value), self.value_text, self.plan, self.release,
                self.sentence, self.line, self.date, self.series, self.change, list(self.old), list(self.newest)]

    @classmethod
    def from_json(cls, source: str, data: list[Any]) -> Fact:
        key, value, text, plan, release, sentence, line, date, series, change, old, newest = data
        return cls(tuple(key), tuple(value), text, plan, release, source,  # type: ignore[arg-type]
                   sentence, line, date, series or "", change or "", tuple(old or ()), tuple(newest or ()))


@dataclass(frozen=True)
class Profile:
    """What products.py and the timelines need to know of a whole document."""

    title: str = ""
    kind: str = "reference"  # "reference" (the product as it is), "release" (notes, changelog, guide), "requirements"
    names: tuple[tuple[str, int], ...] = ()  # the names it gives its releases ("Acme 1.2" -> "acme"), how often
    words: tuple[str, ...] = ()  # its title's words that may name a product, keyed
    newest: str | None = None  # the newest release it names (its title's, its release sections')
    newest_date: str | None = None
    dated: tuple[tuple[str, str], ...] = ()  # (release, date) of every release it dates (an announcement dates its notes)
    subject: str = ""  # what its opening says it is ("Acme is a tool for ..."), keyed: a front page's product
    # the versions it names of each versioned name ("Python 3.11" -> ("python", ("3.11",))): which
    # versions of a runtime exist, for the minimum left after a drop (timelines.successor)
    named: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the top folders of raw/ its table of contents lists documents of (a Sphinx index's toctree:
    # `start/install`, `guide/commands`): the documentation it is the front page of
    contents: tuple[str, ...] = ()

    def to_json(self) -> list[Any]:
        return [self.title, self.kind, [list(n) for n in self.names], list(self.words), self.newest, self.newest_date,
                [list(d) for d in self.dated], self.subject, [[n, list(v)] for n, v in self.named], list(self.contents)]

    @classmethod
    def from_json(cls, data: list[Any]) -> Profile:
        title, kind, names, words, newest, newest_date, dated, subject = data[:8]
        named = data[8] if len(data) > 8 else []
        contents = data[9] if len(data) > 9 else []
        return cls(title, kind, tuple((str(n), int(c)) for n, c in names), tuple(words), newest, newest_date,
                   tuple((str(v), str(d)) for v, d in dated), str(subject),
                   tuple((str(n), tuple(str(x) for x in v)) for n, v in named), tuple(str(c) for c in contents))


@dataclass
class Table:
    """A table's rows, the first one its header when it holds no figure."""

    header: list[str] | None
    rows: list[tuple[list[str], str, int, str | None, str | None]]  # (cells, row text, line, release, date)


@dataclass
class Statements:
    """What extract() reads of one source."""

    path: str
    title: str = ""
    product: tuple[str, str] | None = None  # ("go", "1.22") from the document's title
    series: str = ""
    date: str | None = None
    # (sentence, line, its release's version, its release's date[, its section's title]): a changelog holds many releases
    sentences: list[tuple[Any, ...]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    profile: Profile = field(default_factory=Profile)


def title_version(title: str) -> tuple[str, tuple[int, ...]] | None:
    """("acme", (1, 22)) from "Acme 1.22 Release Notes": the release the title names (the lexicon's
    title_release), with its release numbers."""
    found = title_release(title)
    if found is None:
        return None
    numbers = release_numbers(found[1])
    return (found[0], numbers) if numbers else None


def _name_key(name: str) -> str | None:
    """A release's name as a product key, when it can be one ("Acme" -> "acme"; not "the", "version")."""
    key = product_key(name.strip().lower())
    if " " in key or key in STOPWORDS or key in DOC_WORDS or key in _NOT_NAMES or not re.match(r"[a-z]", key):
        return None
    return key


def title_words(title: str) -> tuple[str, ...]:
    """The words of a title that may name a product: "Welcome to Acme's documentation!" -> ("acme",)."""
    out: list[str] = []
    for word in re.findall(r"[A-Za-z][\w+.#-]*[\w+#]|[A-Za-z]", title.replace("’", "'")):
        key = _name_key(re.sub(r"'s$", "", word))
        if key and len(key) > 1 and key not in out:
            out.append(key)
    return tuple(out)


def _is_requirements(doc: Any) -> bool:
    text = "\n".join(b.text for b in doc.blocks[:20] if b.kind != "heading")[:3000]
    if "=" not in text or not _SPEC_OPERATOR.search(text):  # (each of its operators has a "=")
        return False  # most documents have no specifier at all: nothing to count
    tokens = text.split()
    if len(tokens) < 2:
        return False
    specs = sum(1 for t in tokens if _SPEC.fullmatch(t))
    return specs >= 2 and specs >= 0.6 * len(tokens)


MAX_NAMED = 64  # versions kept of one name: enough to tell a series numbered one by one


def profile_of(doc: Any, versions: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> Profile:
    names: Counter[str] = Counter()
    releases: list[tuple[str, str | None]] = []
    title = doc.title or ""
    own = title_release(title)
    if own is not None:
        if (key := _name_key(own[0])) is not None:
            names[key] += 1
        releases.append((own[1], doc.date))
    if doc.version:
        releases.append((doc.version, doc.date))
    # a document titled by its release alone ("13.0.0"): that release's notes
    titled = bool(doc.sections and doc.sections[0].version and doc.sections[0].parent < 0
                  and " ".join(str(doc.sections[0].title).split()) == " ".join(title.split()))
    if titled and not own:
        releases.append((doc.sections[0].version, doc.sections[0].date or doc.date))
    release_sections = 0
    changelog = bool(_RELEASE_TITLE.search(title))
    for section in doc.sections:
        if not section.version:
            continue
        release_sections += 1
        # an undated numbered section may be a plan ("Features removed in 6.1"): only a dated
        # one says a release came out, or one of a document that calls itself a changelog
        if section.date or changelog:
            releases.append((_section_version(section) or section.version, section.date))
        named = title_release(section.title)
        # a dated release heading names its product ("acme 6.1.0 (2020-09-26)"); an undated
        # numbered heading ("Node 1.0: Quick reference") may be anything's
        if section.date and named is not None and (key := _name_key(named[0])) is not None:
            names[key] += 1
    if _is_requirements(doc):
        kind = "requirements"
    elif own is not None or doc.version or titled or release_sections >= 2 or _RELEASE_TITLE.search(title):
        kind = "release"
    else:
        kind = "reference"
    newest = max(releases, key=lambda r: (version_key(r[0]), r[1] or "")) if releases else None
    dated = tuple(dict.fromkeys((v, d) for v, d in releases if d))
    contents = tuple(sorted({parts[1] for entry in getattr(doc, "toc", None) or ()
                             if len(parts := str(entry.target).split("/")) > 2 and parts[0] == "raw"}))
    return Profile(title, kind, tuple(sorted(names.items())), title_words(title),
                   newest[0] if newest else None, newest[1] if newest else None, dated, _opening_subject(doc), versions,
                   contents)


@lru_cache(maxsize=1024)
def _versioned(text: str) -> tuple[re.Match[str], ...]:
    """VERSIONED's matches in a text: read for the document's profile (_named_versions), then for
    the requirements of the sentences that state one (_requirements)."""
    return tuple(VERSIONED.finditer(text))


def _named_versions(texts: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The versions each versioned name takes in these texts, in version order."""
    seen: dict[str, set[str]] = {}
    for text in texts:
        for m in _versioned(text):
            name = entity(m.group("name"))
            # a name of two words may be a verb and the name ("Support Docutils 0.20", "Drop
            # Docutils 0.19"): the version is the last word's too
            for each in (name, name.rsplit(" ", 1)[-1] if name and " " in name else None):
                if each:
                    found = seen.setdefault(each, set())
                    if len(found) < MAX_NAMED:
                        found.add(m.group("ver"))
    # "4.01" and "4.1" are one version in numbers: the text breaks the tie, whatever order the set holds them in
    return tuple((n, tuple(sorted(v, key=lambda x: (version_numbers(x), x)))) for n, v in sorted(seen.items()))


# "Acme is a tool for ...", "*Acme* is the uncompromising ...": a name the opening defines; a
# name of several words is the short name it gives in brackets ("Advanced Python Toolkit (APT)
# is a library ...")
_DEFINES_ITSELF = lazy(r"^[\W_]{0,3}(?:[A-Z][\w.+-]*(?:\s+[A-Z][\w.+-]*){1,5}[*_`]{0,2}\s+\([*_`]{0,2}(?P<short>[A-Za-z][\w.+-]*)[*_`]{0,2}\)|"
                       r"(?P<name>[A-Za-z][\w.+-]*?)[*_`]{0,2})\s+is\s+(?:a|an|the)\s", re.M)


def _opening_subject(doc: Any) -> str:
    """What a document's opening says it is: the subject of the first "X is a ..." sentence of
    its first paragraphs, keyed ("" when none). A front page whose title is a slogan ("The
    Uncompromising Code Formatter") names its product there."""
    seen = 0
    for block in doc.blocks:
        if block.kind != "para":
            continue
        seen += 1
        m = _DEFINES_ITSELF.match(block.text)
        if m is not None:
            return _name_key(m.group("short") or m.group("name")) or ""  # "This is a ..." names nothing (a stop word has no key)
        if seen >= 6:
            break
    return ""


def _leads_in(text: str) -> bool:
    """Whether a text ends on a sentence that introduces a list of what the product supports
    ("Acme 5.7 runs on:", "The supported Python versions are:")."""
    return text.rstrip().endswith(":") and _LEAD_IN.search(text) is not None  # the pattern ends a text on a colon


def introduces_list(text: str) -> bool:
    """Whether a text ends on a sentence that introduces a list the extractor reads with it: one
    of what the product supports, or of raised minimums ("The minimum versions of these
    dependencies increased:")."""
    return _leads_in(text) or (text.rstrip().endswith(":") and _MIN_LEAD_IN.search(text) is not None)


# an item of a list that names one version of one thing: "CPython 3.11", "Python (3.11+)"
_ONE_VERSION_ITEM = lazy(r"^(?P<name>[A-Za-z][\w+.-]*?)\s*(?P<open>\()?\s*v?(?P<ver>\d+(?:\.\d+)*)(?P<plus>\+)?"
                         r"(?(open)\))\s*\.?$")


def _version_lists(sentences: Any) -> list[Any]:
    """The sentences, where a list that a sentence introduces ("The supported Python versions
    are:", "Acme 5.7 runs on:") names one version an item ("- CPython 3.11", "- CPython 3.12")
    read as one item that lists them all ("CPython 3.11, CPython 3.12"), at its first item's line; an
    item that puts its version in brackets ("Python (3.11+)") read as it is said elsewhere
    ("Python 3.11+")."""
    out: list[Any] = []
    lead: int | None = None  # the section of the list being read, after a sentence that introduces it
    run: list[tuple[Any, str, str]] = []  # (sentence, name, version) of the items read

    def flush() -> None:
        if len(run) >= 2 and len({name for _, name, _ in run}) == 1 and not any(v.endswith("+") for _, _, v in run):
            # the items' own words, in their order (a page quotes it as the file has it)
            text = ", ".join(f"{name} {version}" for _, name, version in run)
            out.append(replace(run[0][0], text=text, end=run[-1][0].end or run[-1][0].line))
        else:
            out.extend(replace(item, text=f"{name} {version}") for item, name, version in run)
        run.clear()

    for s in sentences:
        item = _ONE_VERSION_ITEM.match(s.text.strip()) if s.kind == "item" and lead == s.section else None
        if item is None:
            flush()
            if s.kind != "item":
                lead = s.section if _leads_in(s.text) else None
            out.append(s)
            continue
        run.append((s, item.group("name"), item.group("ver") + (item.group("plus") or "")))
    flush()
    return out


def statements_of(doc: Any, sentences: Any) -> Statements:
    """Statements from a loaded Document and its analysis sentences (each knows its section).
    The series is the product the title names; products.py names the others' from the
    documentation set they sit in, which depends on the rest of raw/."""
    sections = doc.sections
    out: list[tuple[Any, ...]] = []
    tables: list[Table] = []
    table: Table | None = None  # the table the last rows were in: rows in a run, in one section, are one table
    table_section = -2
    lead_in: tuple[str, int, int] | None = None  # "X works on:" before a list, the list's section, its items read
    raised: tuple[str, int, int] | None = None  # "The minimum versions ... increased:" before a list, its section, its items read
    versioned: list[str] = []  # texts that may name a version
    for s in _version_lists(sentences):
        if s.kind == "data":
            continue  # a row of a long table (a list of plugins, an index) is data: it states no fact
        said = s.text
        digit = DIGIT.search(said) is not None  # (asked once of a sentence, again only of one read with the one before)
        if digit:
            versioned.append(said)
        shown = None  # how a page quotes the statement, where that is not its text
        if s.kind == "item" and raised is not None and raised[1] == s.section and _ARROW_ITEM.match(s.text):
            # "Twisted: 18.9.0 → 21.7.0" under it: a minimum raised, read with the sentence before
            # (quoted with the items between left out, as below)
            if raised[2]:
                shown = f"{raised[0]} … {s.text}"
            raised = (raised[0], raised[1], raised[2] + 1)
            s = replace(s, text=f"{raised[0]} {s.text}")
        elif s.text.rstrip().endswith(":") and _MIN_LEAD_IN.search(s.text):
            raised = (s.text.rstrip(), s.section, 0)  # (an item may introduce the list it holds)
        elif s.kind != "item":
            raised = None
        if s.kind == "item" and lead_in is not None and s.section == lead_in[1]:
            # an item of a list a sentence introduces ("The current version works on:" then
            # "- CPython 3.10, 3.11 and 3.12.") is read as that sentence finished by the item;
            # after other items, it is quoted with them left out ("... works on: … CPython 3.10")
            if lead_in[2]:
                shown = f"{lead_in[0]}: … {s.text}"
            lead_in = (lead_in[0], lead_in[1], lead_in[2] + 1)
            s = replace(s, text=f"{lead_in[0]} {s.text}")
        elif s.kind != "item":
            lead_in = None
            if _leads_in(s.text):
                lead_in = (s.text.rstrip().rstrip(":").rstrip(), s.section, 0)
        if s.text != said:
            digit = DIGIT.search(s.text) is not None
        if s.kind == "table":
            cells = [c.strip() for c in s.text.split(" | ")]
            if table is None or s.section != table_section:
                table, table_section = Table(None, []), s.section
                tables.append(table)
                if not digit:
                    table.header = cells
                    continue
            if digit:
                version, date = _release_here(s, sections)
                table.rows.append((cells, s.text, s.line, version, date))
            continue
        table = None
        if s.kind == "heading" or not (digit or "default" in s.text.lower() or may_remove(s.text)):
            continue  # extract() asks has_hint
        version, date = _release_here(s, sections)
        heading = sections[s.section].title if 0 <= s.section < len(sections) else ""
        out.append((s.text, s.line, version, date, heading, s.kind, getattr(s, "subject", None) or "",
                    _upcoming(s, sections), shown))
    found = title_release(doc.title)
    product = (found[0], found[1]) if found else None
    return Statements(doc.path, doc.title, product, product[0] if product else "", doc.date, out,
                      [t for t in tables if t.rows], profile_of(doc, _named_versions(versioned)))


def _release_here(s: Any, sections: Any) -> tuple[str | None, str | None]:
    version, date = s.version, None
    if version is None and (release := release_of(sections, s.section)) is not None:
        version, date = _section_version(release), release.date
    return version, date


def _upcoming(s: Any, sections: Any) -> bool:
    """Whether a sentence is among changes not released yet ("[Unreleased]", a release dated
    in the future): what it states is a plan, not a value that holds."""
    release = release_of(sections, s.section)
    return bool(release is not None and getattr(release, "unreleased", False))


def _section_version(section: Any) -> str | None:
    """A release section's version; where the one it carries is no version, the one its title
    names ("acme 6.1.0 (2020-09-26)")."""
    if section.version and parse_version(section.version) is not None:
        return str(section.version)
    named = title_release(section.title)
    return named[1] if named else section.version


def record(doc: Any, sentences: Any) -> dict[str, Any]:
    """The cached record of one source: its profile and its facts (timelines.facts_of reads it)."""
    statements = statements_of(doc, sentences)
    return {"v": FORMAT, "profile": statements.profile.to_json(), "facts": [f.to_json() for f in extract(statements)]}


def read_record(source: str, data: Any) -> tuple[Profile, list[Fact]] | None:
    """A cached record back, or None when it is of another format (read the source again)."""
    if not isinstance(data, dict) or data.get("v") != FORMAT:
        return None
    return Profile.from_json(data["profile"]), [Fact.from_json(source, f) for f in data["facts"]]


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


def at_least(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """a >= b as versions, where one refining the other counts as equal (3.10 and 3.10.0)."""
    return compatible(a, b) or a > b


def _role(sentence: str, at: int, spans: list[tuple[int, int]]) -> str:
    best: tuple[int, str] | None = None
    for m in _ROLE_WORD.finditer(sentence):
        if any(a <= m.start() < b for a, b in spans):
            continue  # "Windows Server 2016" names a product; it is no server-side role
        distance = abs(m.start() - at)
        if best is None or distance < best[0]:
            best = (distance, ROLES[m.group(0).lower()])
    return best[1] if best else ""


# the verbs of a statement of support, to find where a sentence's first one starts
_CLAUSE_VERB = lazy(r"\b(?:supports?|drops?|adds?|removes?|requires?|needs?|bumps?|raises?)\b")


# a sentence that opens on a thing it names: "This flag ...", "The `--fast` option ..."
_OPENS_ON = lazy(r"\W*(?:this|that|the)\s+[`*]*([A-Za-z][\w.-]*)[`*]*\s+(?:is|are|was|does|do|can|only|will|must|"
                 r"should|has|needs?|requires?|works?)\b", re.I)


# an aside set off by commas between a subject and its verb
_ASIDE = lazy(r",\s*(?:for\s+(?:example|instance)|e\.g\.|however|in\s+particular|of\s+course|in\s+turn|too|"
              r"also|though|likewise|similarly)\s*,\s*", re.I)


def _scope(lead: str, product: str | None) -> str:
    """What requires the value, when it is not the product: "ELFv2 support requires ..." -> "elfv2".
    A requirement in parentheses is an aside on what comes before them ("make it wait for the
    page (requires Toolkit > 2.13)"): that is what requires it."""
    opened, closed = lead.rfind("("), lead.rfind(")")
    if opened > closed:
        lead = lead[:opened]
    lead = re.sub(r"\([^()]*\)", " ", lead)  # "Acme 2.0 (released today) requires": the aside is no subject
    lead = _ASIDE.sub(" ", lead)  # "The Gizmo server, for example, targets ...": nor is this one
    parts = re.split(r"[,;:()]|[.!?]\s", lead)
    clause = parts[-1].lower()
    if clause.strip() in ("which", "that", "who") and len(parts) > 1:
        # "Our theme is Furo 2024.8.6, which needs Python 3.8": the relative clause is said of
        # what ends the clause before it, a versioned name there
        named = [m for m in VERSIONED.finditer(parts[-2]) if not parts[-2][m.end():].strip()]
        if named:
            name = entity(named[-1].group("name")) or ""
            return "" if name == product else name
        clause = " ".join(parts[-2].lower().split()[-1:])  # ... or its last word ("runs on Toolkit, which")
    first = _CLAUSE_VERB.search(clause)
    if first is not None and re.search(r"\s(?:and|but|then)\s*$", clause[first.end():]):
        # "Officially support Python 3.14 and PyPy 3.11 and drop ...", "Acme 2.0 requires Python
        # 3.9 and drops ...": the second verb's subject is the first's, said before it
        clause = clause[: first.start()]
    words = [w for w in re.findall(r"[\w./+-]+", clause) if re.search(r"\w", w)][-4:]
    # "this" is the product where it stands alone or for the release ("this release requires"),
    # not where it points at a part ("this option requires")
    this = words.index("this") if "this" in words else -1
    alone = this >= 0 and (this == len(words) - 1 or words[this + 1] in _THIS_WHOLE)
    if "it" in words and len(parts) > 1 and not (product and product in words):
        # "This flag is not added on X 3.4, as it only works with X >= 3.5": in a clause after
        # the first, "it" is what the sentence opened on, when that is a thing named in it
        subject = _OPENS_ON.match(lead)
        if subject is not None and subject.group(1).lower() not in _THIS_WHOLE | _SCOPE_SKIP \
                and entity(subject.group(1)) != product:
            return subject.group(1).lower()
    if product and (product in words or any(re.fullmatch(rf"{re.escape(product)}-v?\d+(?:\.\d+)*", w) for w in words)) \
            or any(w in ("it", "we") for w in words) or alone:
        return ""  # (the product as its releases are written too: "acme-2.2.0 requires ...")
    kept = [w for w in words if w not in _SCOPE_SKIP and not re.fullmatch(r"v?\d[\w.]*", w)][-2:]
    if kept and all(w in _THIS_WHOLE for w in kept):
        return ""  # "the framework requires ...": the product, by what it is
    return " ".join(kept)


def _named_release(lead: str, scope: str) -> str | None:
    """The release a sentence names for its own subject: "Acme 1.4 supports ..." -> "1.4" (scope "acme")."""
    if not scope or " " in scope:
        return None
    clause = re.split(r"[;:()]", lead)[-1]
    found = None
    for m in VERSIONED.finditer(clause):
        if entity(m.group("name")) == scope:
            found = m.group("ver")
    if found is None and scope in clause.lower():
        # the name as a package writes it, lowercase or with a bound: "acme ≥ 2.2.0 requires ..."
        for m in _OWN_BOUND.finditer(clause):
            if m.group("name").lower() == scope and (m.group("sep").strip() or m.group("name").islower()):
                found = m.group("ver")
    return found


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
    """A fact of a source whose title names no product, in its documentation set's series: a role
    that names the product is the product itself ("Acme supports Python 3.9" in Acme's docs)."""
    relation, name, role = fact.key
    return replace(fact, series=series, key=(relation, name, product_role(role, series) or role if series else role))


def product_role(role: str, product: str) -> str | None:
    """The role a fact has for `product` when it is the product's own ("", "server", "bootstrap"),
    or None when the role says something else requires the value (a feature, a plugin, "you").
    A role is a kind of use (server, client, bootstrap), a scope (the words that require it), or
    both ("server, web app")."""
    if not role:
        return ""
    kinds = set(ROLES.values())
    parts = [p.strip() for p in role.split(", ")]
    kind = parts[0] if parts[0] in kinds else ""
    # "on <title>": "it requires ..." said of what the document is about, which in a product's
    # own documentation is the product
    scope = [p for p in parts if p not in kinds and not p.startswith("on ")]
    if not scope or (product and scope == [product]):
        return kind
    return None


def _described(subject: str, *, plain_names: bool = False) -> str:
    """The key of the API member a description describes ("GEOSGeometry.make_valid()" ->
    "geosgeometry.make_valid"): a callable or a member of a class or module. A package's or a
    glossary term's section ("crypto/tls", "Ownership") speaks for the product: "".
    plain_names: a name only code is written as counts too (`register_hook`, `ShapeReader`: words
    joined by an underscore, or run together with an inner capital), as the thing a requirement
    in its description is of: a method described inside its class's, a setting."""
    name = subject.strip("`* ")
    if not re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(.*\))?|[A-Za-z_]\w*\(.*\)", name) and not (
            plain_names and re.fullmatch(r"_*[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9]|[A-Z][a-z0-9]+[A-Z]\w*", name)):
        return ""
    return re.sub(r"\(.*$", "", name).lower()


def dotted(v: tuple[int, ...]) -> str:
    """A version's numbers as written: (3, 10) -> "3.10"."""
    return ".".join(map(str, v))


_VERB_BEFORE = lazy(r"\b(?:is\s+|are\s+)?(?:(?:only|officially)\s+)?(?:supports?|supported\s+(?:on|with)|tested\s+(?:against|on|with)|"
                    r"runs?\s+on|works\s+(?:on|with)|handles?|works|claims?|declares?|lists?)\s*$", re.I)
_ANY_DROP = lazy(r"\b(?:drop(?:ped|s|ping)?|remov\w*|no\s+longer|deprecat\w*|end(?:ed|s)?\s+support|last)\b", re.I)
_CLAUSE_BREAK = lazy(r"[,;:(]|\s(?:and|but|while|whereas)\s", re.I)


def _drops_here(sentence: str, start: int, end: int) -> bool:
    """Whether the clause holding sentence[start:end] drops or ends support: "the last release to
    support Python 3.7" and "Support for Python 3.9 is dropped" do; "Officially support Python
    3.15 and drop support for Python 3.10" adds 3.15 in one clause and drops 3.10 in the other."""
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    after = _CLAUSE_BREAK.search(sentence, end)
    return bool(_ANY_DROP.search(sentence, breaks[-1] if breaks else 0, after.start() if after else len(sentence)))


def _is_list(listed: str, versions: list[tuple[int, ...]]) -> bool:
    """Three versions or more, none of them open-ended: every release supported, listed; or a
    closed range ("from 1.4 to 2.1", "3.9 through 3.12"): its ends are the oldest and the newest."""
    if _CLOSED_RANGE.fullmatch(listed.strip()) and len(versions) == 2 and versions[0] < versions[1]:
        return True
    return len(versions) >= 3 and not re.search(r"newer|later|higher|above|\+|>=|\bfrom\b|\bto\b|-|–", listed)


_CLOSED_RANGE = lazy(r"(?:from\s+)?v?\d+(?:\.\d+)*\s*(?:to|through|–|-)\s*v?\d+(?:\.\d+)*")
# "Toolkit 1.4.x to 2.1.x is now supported": a closed range said of what is supported
_SUPPORTED_RANGE = lazy(r"\b(?P<name>[A-Z][\w+.]*?)\s+v?(?P<low>\d+(?:\.\d+)*)(?:\.x)?\s+(?:to|through|–|-)\s+"
                        r"v?(?P<high>\d+(?:\.\d+)*)(?:\.x)?\s+(?:is|are)\s+(?:(?:now|also|officially|fully)\s+)*"
                        r"supported\b(?!\s+(?:by|for|with)\b)")


# --- what a release took away, by name ------------------------------------------------------------
# "Remove `isoformat` and `to_iso_time` from `utils`", "The `ACME_ENV` environment variable ...
# are removed", "Rename ``render_many`` parameter to ``render_all``": the names a release's
# notes say are gone, which a team's note that still uses them has not caught up with (lint's
# stale-note). A name is a code span that reads as an identifier; a signature
# (`TemplateResponse(name, context)`), what something belongs to (`Schema`'s) and where it was
# removed from (the words after "from") are not what was removed.
# an item that marks itself as breaking ("*Backwards-incompatible*: Rename ...", "**Breaking:** ..."),
# the verb of a removal, and its passive ("... are removed"): the analysis ranks a release's
# sentences with the same words
BREAKING_PREFIX = (r"[*_]*(?:backwards?[- ]incompatible|(?:potentially\s+|possibly\s+)?breaking(?:\s+change)?|"
                   r"behaviou?r\s+change)[*_]*:[*_]*\s*")
REMOVE_VERB = r"Remove[sd]?|Removing|Drop(?:ped|s)?"
REMOVED_PASSIVE = r"\b(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?removed\b"
_REMOVE_HEAD = lazy(rf"^(?:{BREAKING_PREFIX})?"
                    rf"(?:(?P<back>Restore[sd]?|Re-?add(?:ed|s)?|Reintroduce[sd]?)|{REMOVE_VERB})\b"
                    r"(?P<what>.*)", re.I)
# "`X` has been removed", and "`X` has been dropped" where what went is a name (not "support for ...")
_REMOVED_TAIL = lazy(rf"^(?P<what>.*?)(?:{REMOVED_PASSIVE}|\b(?:is|are|has\s+been|have\s+been|was|were)\s+"
                     r"(?:now\s+)?dropped\b)", re.I)
# "Removed support for the `--dry-run` parameter": what went is the parameter
_SUPPORT_FOR = lazy(r"^\s*(?:the\s+)?support\s+(?:for|of)\s+", re.I)
_DEPENDENCY_ON = lazy(r"\s+(?:the\s+|its\s+)?(?:(?:hard|runtime|install|optional)\s+)?(?:dependency|dependencies|requirement)\s+"
                      r"(?:on|of)\s+", re.I)
_DEPRECATE_HEAD = lazy(rf"^(?:{BREAKING_PREFIX})?(?:Deprecate[sd]?|Deprecating)\b(?P<what>.*)", re.I)
# "`old_hook` is deprecated", "The `schedule()` method is deprecated": the names open the sentence
# ("Using strings in options like `selectinload` is deprecated" deprecates the strings)
# ... or a changelog item's title that is only the name and the word ("`acme.util.etree` deprecated")
# ... or a second thing said of the name the sentence opens on ("The `x` option now defaults to `1`
# and is deprecated"); "Both `x` and `y` have been deprecated", "The old `x` name is now deprecated"
_DEPRECATED_TAIL = lazy(r"^(?:both\s+|the\s+(?:old\s+|former\s+|legacy\s+)?)?(?P<what>`[^`]+`(?:\s*(?:,|and|or|/)\s*`[^`]+`)*)(?:\s+(?!(?:is|are|has|have|was|were|now)\b)(?P<kind>[a-z]+))?\s+"
                        r"(?:(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?deprecated\b"
                        r"|deprecated\s*[.:]?\s*$"
                        r"|[^.;]{0,80}?\band\s+(?:is|has\s+been)\s+(?:now\s+)?deprecated\b)", re.I)
# (what it was in may be code: "Renamed the `x` argument in `pkg.run()` to `y`")
_RENAMED = lazy(r"\bRenamed?\s+(?:the\s+)?(?P<old>`[^`]+`)(?:[^`.;]|`[^`]+`){0,60}?\bto\s+`[^`]+`"
                r"|(?P<old2>`[^`]+`)[^`.;]{0,40}?\b(?:is|was|has\s+been)\s+renamed\s+to\s+`", re.I)
# where what was removed ends: "... from `acme.utils`" (where), "... to prevent errors when
# setting `X`" (why); a comma or "and" between two names goes on
_WHAT_ENDS = r"\s(?:from|in|on|of|to|for|when|while|because|since|so|that|which|as|by|with|without|if|instead|now)\s|\(|;"
_WHERE_FROM = lazy(_WHAT_ENDS + r"|,(?!\s*(?:and\s+|or\s+)?`)|\s(?:and|or)\s(?!\s*`)", re.I)
# where what a release deprecates ends: as a removal's, but a list goes on past "and" and commas
# ("Deprecate `X`, `Y` and the `Z` parameter in favor of `W`")
_DEPRECATED_UNTIL = lazy(_WHAT_ENDS, re.I)
# a deprecation of one use of a name, or of what it does, not of the name: "Deprecate `x` in case
# of `y`", "Deprecated `x` when called without `y`", "Deprecate `x` to have consistent return values"
_ONLY_WHEN = lazy(r"\s(?:in\s+(?:the\s+)?case|when|if|unless|where|to\s+(?:change|have|make|return|give))\b",
                  re.I)
# a deprecation note's own heading ("Deprecated since version 3.1: ...", as Sphinx writes it)
_DEPRECATED_SINCE = lazy(r"\s*(?:since|in)\s+(?:version\s+)?[\w.]+\s*:\s*", re.I)
_SAID_DEPRECATED = lazy(r"\s(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?deprecated\b", re.I)
# what a name removed may be called after it ("`on_event()` decorator", "`ACME_ENV` environment
# variable"); another word there says something else went ("`max_parts` restriction")
# a changelog item's tag for the part of the product it is about: "[watchmedo] Removed ...", "[core] ..."
_AREA_TAG = lazy(r"^\s*\[[\w .:/-]{1,30}\]\s*")
_WHERE_USED = frozenset("cli command command-line line keyword positional optional config configuration public private "
                        "internal undocumented deprecated legacy".split())
_CODE_KINDS = frozenset("""parameter parameters argument arguments attribute attributes method methods function functions
class classes property properties decorator decorators module modules option options setting settings config
configuration key keys variable variables environment field fields alias aliases flag flags constant constants hook hooks
command commands keyword type types helper helpers shim shims extra extras entry entries object objects
worker workers backend backends plugin plugins extension extensions handler handlers name names
""".split())
_USE_OF = lazy(r"\b(?:usage|uses?|calls?|references?|mentions?|imports?)\s+(?:of|to)\s+$", re.I)
_SPAN = lazy(r"`([^`]+)`(?P<owner>'s)?")
# a name a release item writes without marks, where nothing in it is marked: an option
# ("--dry-run") or an identifier spelled with an underscore ("easy_setup")
_UNMARKED = lazy(r"(?<![\w`/.-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*|[A-Za-z]\w*_\w*[A-Za-z0-9](?:\(\))?)(?![\w`/-]|\.\w)")
_IDENTIFIER = lazy(r"@?(?P<name>[A-Za-z_][\w.]*[\w])(?P<call>\(\))?")
_OPTION_NAME = lazy(r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _mask_spans(text: str) -> str:
    """The text with each code span's inside blanked out (same length), so that the words that
    end what a release removed are not read inside a name."""
    return _SPAN.sub(lambda m: "`" + "x" * (len(m.group(0)) - 2) + "`", text)


def may_remove(text: str) -> bool:
    """Whether a sentence may say a release removed, renamed or restored a name (removed_names reads it)."""
    return ("`" in text or "_" in text or "--" in text) and (
        "emov" in text or "enam" in text or "Drop" in text or "drop" in text or "estor" in text
        or "e-add" in text or "eadd" in text or "eintroduc" in text or "eprecat" in text)


# a deprecation taken back: "Undeprecate `X`", "`X` and `Y`, which were deprecated in 6.2, are no
# longer deprecated", "`X` has been **undeprecated**"
_UNDEPRECATE_HEAD = lazy(r"^(?:Un-?deprecate[sd]?|Un-?deprecating)\b(?P<what>.*)", re.I)
_UNDEPRECATED_TAIL = lazy(r"^(?P<what>.*?)\b(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?"
                          r"(?:no\s+longer\s+deprecated|[*_]*un-?deprecated)\b", re.I)


def removed_names(sentence: str) -> list[tuple[str, str]]:
    """The identifiers a release's sentence says were removed or renamed ("removed"), brought
    back ("restored": "Restore previously removed `X`"), or deprecated ("Deprecated `X`", "`X` is
    deprecated and will be removed in 4.0"), or no longer deprecated ("undeprecated": "Undeprecate
    `X`"), as written."""
    sentence = _AREA_TAG.sub("", sentence, count=1)  # "[cli] Removed ...": the part of the product it is
    chunks: list[str] = []
    change = "removed"
    package = False  # what went is a dependency, named as a package is
    undone = _UNDEPRECATE_HEAD.match(sentence.strip()) or _UNDEPRECATED_TAIL.match(sentence.strip())
    if undone is None and re.search(r"\b(?:not|n't|never|un-?deprecat\w*)\b", sentence, re.I):
        return []  # "is not removed": nothing is gone
    deprecated = None if undone is not None else (
        _DEPRECATE_HEAD.match(sentence.strip()) or _DEPRECATED_TAIL.match(sentence.strip()))
    if undone is not None:
        change = "undeprecated"
        what = re.split(r",\s*which\b", undone.group("what"), maxsplit=1)[0]  # what it was is no name
        cut = _DEPRECATED_UNTIL.search(_mask_spans(what))
        chunks.append(what[: cut.start()] if cut else what)
    elif deprecated is not None:
        change = "deprecated"  # whatever it says will happen later ("will be removed in 4.0")
        what = deprecated.group("what")
        if (kind := deprecated.groupdict().get("kind")) and kind.lower() in _CODE_KINDS:
            what += " " + kind  # "The old `x` name is deprecated": the kind of name it is
        if (since := _DEPRECATED_SINCE.match(what)) is not None:
            # "Deprecated since version 3.1: The `x` parameter is deprecated ...": the note says
            # what; one that only says what to use instead ("Use `y`.") names no deprecated name
            said = _SAID_DEPRECATED.search(what, since.end())
            what = what[since.end(): said.start()] if said else ""
        cut = _DEPRECATED_UNTIL.search(_mask_spans(what))
        if cut is None or (cut.group(0).strip().lower() != "as" and not _ONLY_WHEN.match(what, cut.start())):
            # what is deprecated ends before what replaces it ("Deprecate `X` in favor of `Y`")
            # or where it was ("... parameter of `Y`"); "Deprecated `X` as a table in `Y`"
            # deprecates one way of writing X, not a name, and "`X` in case of `Y`" one use of it
            chunks.append(what[: cut.start()] if cut else what)
    elif _PLAN.search(sentence):
        return []  # "will be removed": nothing is gone yet
    elif (head := _REMOVE_HEAD.match(sentence.strip())) is not None:
        change = "restored" if head.group("back") else "removed"
        what = head.group("what")
        # "Removed the dependency on `six`": what went is what was depended on, a package's name
        # however plain
        if (dep := _DEPENDENCY_ON.match(what)) is not None:
            what, package = what[dep.end():], True
        elif (support := _SUPPORT_FOR.match(what)) is not None:
            what = " " + what[support.end():]
        cut = _WHERE_FROM.search(_mask_spans(what))
        chunks.append(what[: cut.start()] if cut else what)
    elif (tail := _REMOVED_TAIL.match(sentence.strip())) is not None:
        what = tail.group("what")
        if (which := re.search(r",?\s*which\s*$", what)) is not None:
            # "`A` and `B` no longer share a `Base` class, which has been removed": what went is
            # the last thing named before "which"
            what = what[: which.start()]
            what = what[max(0, what.rfind("`", 0, what.rfind("`"))):] if what.count("`") >= 2 else ""
        chunks.append(what)
    if not chunks and "eprecat" in sentence and _RENAMED.search(sentence):
        change = "deprecated"  # "Renamed `x` to `y` (and deprecated the old name)": x still works
    for m in _RENAMED.finditer(sentence) if deprecated is None and undone is None else ():
        # the old name, and what kind of name it is, up to where it was or what it became
        what = sentence[m.start("old" if m.group("old") else "old2"): m.end()]
        cut = _WHERE_FROM.search(_mask_spans(what))
        chunks.append(what[: cut.start()] if cut else what)
    names: list[str] = []
    for chunk in chunks:
        spans = list(_SPAN.finditer(chunk)) or list(_UNMARKED.finditer(chunk))
        for span in spans:
            if span.groupdict().get("owner"):
                continue  # `Schema`'s `context`: what it belongs to stays
            # the kind of name it is may come after a word that says where it is used ("the
            # `--trace` CLI argument", "the `timeout` keyword argument")
            after = re.match(r"\s*([A-Za-z]+)(?:[\s-]+([A-Za-z]+))?", chunk[span.end():])
            kind = after is not None and (after.group(1).lower() in _CODE_KINDS or (
                after.group(1).lower() in _WHERE_USED and (after.group(2) or "").lower() in _CODE_KINDS))
            if (after and not kind and after.group(1).lower() not in ("and", "or")) \
                    or _USE_OF.search(chunk[: span.start()]):
                continue  # "`max_parts` restriction", "usage of `x`": the name stays
            # a name written as a string (`"acme.plugins"` entry point) is that name
            # ... and so is a name written relative to where it is (`.Loop.run`, `~pkg.Loop`)
            written = span.group(1).strip().strip("\"'").lstrip(".~")
            if _OPTION_NAME.fullmatch(written):
                if written not in names:
                    names.append(written)  # a command-line option: `--root`
                continue
            ident = _IDENTIFIER.fullmatch(written)
            if ident is None:
                continue  # a signature, a command line, a value
            name = ident.group("name")
            distinct = "_" in name or "." in name or ident.group("call") is not None \
                or (len(name) >= 4 and (name.isupper() or any(c.isupper() for c in name[1:])))
            # a plain word is too common to follow, unless the item says what kind of name it is
            # ("The `ordered` option is removed")
            if ((distinct and len(name) >= 4) or (package and len(name) >= 3) or (kind and len(name) >= 5)) \
                    and name not in names:
                names.append(name)
    return [(name, change) for name in names]


def extract(doc: Statements) -> list[Fact]:
    if doc.profile.kind == "requirements":
        return []  # a build's pins, not the product's facts
    product = doc.product[0] if doc.product else None
    own = doc.product[1] if doc.product else None
    release_doc = doc.profile.kind == "release"
    out: list[Fact] = []
    for entry in doc.sentences:
        sentence, line, release, release_date = entry[:4]
        heading = entry[4] if len(entry) > 4 else ""
        kind = entry[5] if len(entry) > 5 else "para"
        # a sentence of the description of an API or option (`.. method:: Geometry.make_valid()`)
        # is about that: "Requires Toolkit 3.8." there is the method's need, not the product's
        described = _described(entry[6]) if len(entry) > 6 and entry[6] else ""
        # what a requirement in the sentence is of: the member described, named any way code is
        needs_of = _described(entry[6], plain_names=True) if len(entry) > 6 and entry[6] else ""
        section_release = release
        default_release = section_release or own
        date = release_date or (doc.date if not section_release else None)
        if len(sentence) <= 600 and not described and "default" in sentence.lower():
            out.extend(_within_setting(_choices(doc, sentence, line, default_release, date, product),
                                       entry[6] if len(entry) > 6 else None))
            # the setting it is under: a directive's, or a section's that is named for it alone
            setting = (entry[6] if len(entry) > 6 else "") or _heading_name(heading)
            if not release_doc and not section_release and setting:
                out.extend(_stated_default(doc, setting, sentence, line))
        # the release that removed it: the section's, or the document's where it is one release's
        # notes ("What's new in Acme 6.3.0", a page for each release)
        removed_in = section_release or (own if release_doc else None)
        if removed_in and may_remove(sentence) and len(sentence) <= 600:
            out.extend(Fact(("removed", name.lower(), ""), (), name, False, removed_in, doc.path, sentence, line,
                            date, doc.series, change) for name, change in removed_names(sentence))
        # a release's item that only drops a versioned name ("Drop Python 3.8 in #1281") has no hint word
        bare_drop = bool(section_release or release_doc) and _DROP_ITEM.match(sentence) is not None
        if len(sentence) > 600 or not DIGIT.search(sentence) or not (bare_drop or has_hint(sentence, release_doc)):
            continue

        def add(key: tuple[str, str, str], value: tuple[int, ...], text: str, plan: bool,
                at_release: str | None, change: str = "", old: tuple[int, ...] = (), newest: tuple[int, ...] = (),
                sentence: str = sentence, line: int = line, date: str | None = date) -> None:
            if key[2] == key[1]:
                # "Drop Python 3.10 and require Python >= 3.11.5": the name before the verb is the
                # one required again, not who requires it
                key = (key[0], key[1], "")
            out.append(Fact(key, value, text, plan, at_release, doc.path, sentence, line, date, doc.series, change, old,
                            newest))

        def whose(lead: str, default_release: str | None = default_release) -> tuple[str, str | None]:
            """(scope, release) of the subject the words before a statement name."""
            scope = _scope(lead, product)
            return scope, _named_release(lead, scope or product or "") or default_release

        taken: list[tuple[int, int]] = []  # spans already read as a fact's value
        first = len(out)  # this sentence's facts start here
        past = _PAST.search(sentence)
        plan_here = bool(_PLAN.search(sentence))
        # --- a changelog's "Removed" section: its items name what went
        if heading and _REMOVED_SECTION.match(heading) and (item := _REMOVED_ITEM.match(sentence.strip())):
            name = entity(item.group("name"))
            versions = _versions(item.group("list"))
            if name and versions and name != product:
                add(("min", name, ""), max(versions), f"{item.group('name')} {item.group('list').strip()}", False,
                    default_release, "drop")
                continue
        # --- a section named after one thing, whose sentence gives its minimum without its name
        if heading and (unnamed := _UNNAMED_MIN.match(sentence.strip())) \
                and (one := _ONE_NAME.fullmatch(heading.strip())) \
                and one.group("name").lower() not in _SECTION_KINDS:
            name = entity(one.group("name"))
            if name and name != product and not past:
                add(("min", name, ""), _version(unnamed.group("ver")), f"{one.group('name')} {unnamed.group('ver')}",
                    plan_here, default_release)
                continue
        # --- a list item that is only a versioned name, open-ended ("Requirements: - Python 3.10+")
        if kind == "item" and (bare := _BARE_ITEM.match(sentence.strip())) and not _HEAD_TRIGGER.match(bare.group("name")):
            name = entity(bare.group("name"))
            if name and name != product and name not in STOPWORDS:
                add(("min", name, ""), _version(bare.group("ver")), bare.group("value").strip(), False, default_release)
                continue
        # --- "The minimum Python version is now 3.10", "Toolkit 3.0 is the oldest version it accepts"
        low = sentence.lower()
        minimum = "minimum" in low or "oldest" in low or "lowest" in low or "earliest" in low
        for m in chain(_MIN_IS.finditer(sentence), _MIN_RAISED.finditer(sentence)) if minimum else ():
            written = m.group("name") or m.group("name2") or m.groupdict().get("name3") or ""
            if m.groupdict().get("back"):
                before = list(_NAMED_BEFORE.finditer(sentence[: m.start()]))
                written = before[-1].group("name") if before else ""
            name = entity(written)
            if not name or past or (product and name == product) or any(a <= m.start() < b for a, b in taken):
                continue
            who = m.groupdict().get("who")
            scope, at = ("", default_release) if m.groupdict().get("back") else whose(sentence[: m.start()] + (" " + who if who else ""))
            taken.append((m.start(), m.end()))
            add(("min", name, scope), _version(m.group("ver")), f"{written} {m.group('ver')}", plan_here, at)
        for m in _DEP_RAISED.finditer(sentence) if ("dependency" in low or "requirement" in low) else ():
            name = entity(m.group("name"))
            if not name or name in STOPWORDS or past or (product and name == product) \
                    or any(a <= m.start("name") < b for a, b in taken):
                continue
            scope, at = whose(sentence[: m.start()])
            taken.append((m.start(), m.end()))
            add(("min", name, scope), _version(m.group("ver")), f"{m.group('name')} {m.group('ver')}", plan_here, at)
        for m in _IS_MIN.finditer(sentence) if minimum else ():
            name = entity(m.group("name"))
            if not name or past or (product and name == product) or any(a <= m.start() < b for a, b in taken):
                continue
            who = m.group("who")
            scope = "" if not who or who.lower() in ("it", "we", "this") or who.lower() in _THIS_WHOLE else (entity(who) or "")
            taken.append((m.start(), m.end()))
            add(("min", name, scope if scope != product else ""), _version(m.group("ver")),
                f"{m.group('name')} {m.group('ver')}", plan_here, default_release)
        for m in _MAX_IS.finditer(sentence) if ("newest" in low or "latest" in low or "highest" in low
                                                 or "maximum" in low) else ():
            name = entity(m.group("name"))
            if not name or name in STOPWORDS or past or (product and name == product) \
                    or any(a <= m.start() < b for a, b in taken):
                continue
            who = m.group("who")
            scope, at = whose(sentence[: m.start()] + (" " + who if who else ""))
            taken.append((m.start(), m.end()))
            add(("max", name, scope), _version(m.group("ver")), f"{m.group('name')} {m.group('ver')}", plan_here, at)
        # --- support statements: last versions, ranges, lists, drops
        for m in _LAST.finditer(sentence) if "last" in low else ():
            name = entity(m.group("name"))
            versions = _versions(m.group("list"))
            if not name or not versions:
                continue
            taken.append((m.start(), m.end()))
            add(("min", name, ""), max(versions), f"{m.group('name')} {m.group('list').strip()}", plan_here,
                m.group("subject"), "last")
        supports = "support" in low or "compatible" in low or "works" in low or "runs" in low or "accept" in low \
            or "target" in low or "installs" in low
        for m in _SUPPORTS.finditer(sentence) if supports else ():
            name = entity(m.group("name"))
            versions = _versions(m.group("list"))
            if not name or not versions or past or (product and name == product):
                continue
            if any(a <= m.start() < b for a, b in taken):
                continue
            if _NEGATION.search(sentence[max(0, m.start() - 25) : m.start()]) or _DROP_VERB.search(sentence[max(0, m.start() - 25) : m.start()]):
                continue  # "Drop support Python 3.8": a drop (_DROP), not a version supported
            listed = re.sub(r"[\s,]*(?:and|or|to|up\s+to|,)$", "", m.group("list").strip())
            scope, at = whose(sentence[: m.start()])
            taken.append((m.start("name"), m.end()))
            if len(versions) == 1 and not _OPEN_ENDED.search(m.group("list") + sentence[m.end() : m.end() + 20]):
                # "Officially support Python 3.12": a version added, not the oldest one supported;
                # where the sentence names who supports it ("Acme still supports Python 3.8"),
                # lint compares it with the oldest the product supports now
                if scope and not plan_here:
                    add(("supported", name, scope), versions[0], f"{m.group('name')} {listed}", False, at)
                elif not scope and at and release_doc and not _drops_here(sentence, m.start(), m.end()):
                    add(("max", name, ""), versions[0], f"{m.group('name')} {listed}", plan_here, at)  # the newest, added
                continue
            newest = max(versions) if _is_list(listed, versions) else ()
            # who supports it: "Six supports Python 2.7" is six's, not its folder's neighbours'
            # (the product itself, "it" and "this release" leave the role empty)
            add(("min", name, scope), min(versions), f"{m.group('name')} {listed}", plan_here, at, newest=newest)
            if newest:  # ... and its newest is the newest supported
                add(("max", name, scope), newest, f"{m.group('name')} {dotted(newest)}", plan_here, at)
        for m in _SUPPORTED_RANGE.finditer(sentence) if supports and not past else ():
            name = entity(m.group("name"))
            low, high = _version(m.group("low")), _version(m.group("high"))
            if not name or (product and name == product) or not low < high or any(a <= m.start() < b for a, b in taken):
                continue
            if _NEGATION.search(sentence[m.start() : m.end()]):
                continue
            scope, at = whose(sentence[: m.start()])
            taken.append((m.start(), m.end()))
            said = f"{m.group('name')} {m.group('low')} to {m.group('high')}"
            add(("min", name, scope), low, said, plan_here, at, newest=high)
            add(("max", name, scope), high, f"{m.group('name')} {m.group('high')}", plan_here, at)
        for m in _NOTHING_NEWER.finditer(sentence) if "than" in low and not past else ():
            name = entity(m.group("name"))
            if not name or name in STOPWORDS or (product and name == product) or any(a <= m.start() < b for a, b in taken):
                continue
            who = entity(m.group("who0") or "") or ""
            scope, at = (who if who != product else "", default_release) if who else whose(sentence[: m.start()])
            taken.append((m.start(), m.end()))
            add(("max", name, scope), _version(m.group("ver")), f"{m.group('name')} {m.group('ver')}", plan_here, at)
        accepted = "which" in low or "enough" in low or "supported" in low or " all " in low or minimum
        for m in _ACCEPTED.finditer(sentence) if accepted and not past and not _NEGATION.search(sentence) else ():
            written = m.group("name")
            name = entity(written)
            if not name or name in STOPWORDS or (product and name == product) \
                    or any(a <= m.start("name") < b for a, b in taken):
                continue
            # who accepts it, where the sentence says; the words before the version name whose it is
            # ("the build image's Toolkit 7.68"), not who accepts it
            who = entity(next((w for k in ("who1", "who2", "who3", "who4") if (w := m.group(k))), "")) or ""
            scope = who if who != product else ""
            taken.append((m.start(), m.end()))
            add(("supported", name, scope), _version(m.group("ver")), f"{written} {m.group('ver')}", plan_here,
                default_release)
        # --- the newest version supported: added by a release ("Add support for Python 3.14"), or
        # bounded ("supports Python up to 3.13", "tested against Python 3.14 at most")
        adds = [*_ADDS_SUPPORT.finditer(sentence), *(_SUPPORT_ITEM.finditer(sentence) if release_doc or section_release else ())] \
            if ("support" in low or "test" in low) and not past else []
        for m in adds:
            name = entity(m.group("name") or m.group("name2") or m.groupdict().get("name3") or "")
            versions = _versions(m.group("list") or m.group("list2") or m.groupdict().get("list3") or "")
            if not name or not versions or (product and name == product) or _drops_here(sentence, m.start(), m.end()):
                continue
            if any(a <= m.start() < b for a, b in taken) or _NEGATION.search(sentence[max(0, m.start() - 25) : m.start()]):
                continue
            if _OPEN_AFTER.match(sentence, m.end()):
                continue  # "officially supports Python 3.10+": the oldest supported, not the newest
            if not _ADDED_ENDS.match(sentence, m.end()):
                continue  # "Added support for Python 3.10 `match/case` syntax": a feature of it
            scope, at = whose(sentence[: m.start()])
            taken.append((m.start(), m.end()))
            if any(f.key == ("max", name, scope) and f.value == max(versions) for f in out[first:]):
                continue  # read already: "Add official Python 3.14 support" is a release's item and an addition
            written = m.group("name") or m.group("name2") or m.groupdict().get("name3") or ""
            add(("max", name, scope), max(versions), f"{written} {dotted(max(versions))}", plan_here, at)
        for m in _UP_TO.finditer(sentence) if ("up to" in low or "most" in low) and not past else ():
            name = entity(m.group("name") or m.group("name2") or m.group("name3"))
            ver = m.group("ver") or m.group("ver2") or m.group("ver3")
            if not name or name in STOPWORDS or (product and name == product) or any(a <= m.start() < b for a, b in taken):
                continue
            # who: the words before the verb ("attrs supports Python up to 3.13")
            scope, at = whose(_VERB_BEFORE.sub("", sentence[: m.start()]))
            taken.append((m.start(), m.end()))
            add(("max", name, scope), _version(ver), f"{m.group('name') or m.group('name2') or m.group('name3')} {ver}",
                plan_here, at)
        drops = "support" in low or "dropped" in low
        for many in _DROPPED_MANY.finditer(sentence) if drops else ():
            scope, at = whose(sentence[: many.start()])
            for pair in _PAIR.finditer(many.group("pairs")):
                name = entity(pair.group("name"))
                versions = _versions(pair.group("list"))
                if name and versions and name != product:
                    add(("min", name, scope), max(versions), f"{pair.group('name')} {pair.group('list').strip()}",
                        plan_here, at, "drop")
            taken.append((many.start(), many.end()))
        for pattern in (_DROP, _DROP_AFTER, _DROPPED, _NO_LONGER, _NO_LONGER_SUPPORTS, _NAME_DROPPED,
                        *((_DROP_ITEM,) if bare_drop else ())) if drops or bare_drop else ():
            for m in pattern.finditer(sentence):
                name = entity(m.group("name"))
                versions = _versions(m.group("list"))
                if not name or not versions or (product and name == product):
                    continue
                if any(a <= m.start() < b for a, b in taken) or _INTENT.search(sentence[: m.start()]):
                    continue
                if _IN_PART.match(sentence, m.end()):
                    continue  # "Remove TLS 1.3 support in the Widget backend": a part's support, not the product's
                scope, at = whose(sentence[: m.start()])
                taken.append((m.start(), m.end()))
                add(("min", name, scope), max(versions), f"{m.group('name')} {m.group('list').strip()}", plan_here,
                    at, "drop")
        for m in _DROP_BELOW.finditer(sentence) if drops else ():
            name = entity(m.group("name"))
            if not name or name in STOPWORDS or (product and name == product):
                continue
            if any(a <= m.start("name") < b for a, b in taken) or _INTENT.search(sentence[: m.start()]):
                continue
            scope, at = whose(sentence[: m.start()])
            taken.append((m.start(), m.end()))
            add(("min", name, scope), _version(m.group("ver")), f"{m.group('name')} {m.group('ver')}", plan_here, at)
        # --- a list of raised minimums: "Minimum versions increased for these dependencies: Twisted: 18.9.0 → 21.7.0"
        if ("→" in sentence or "->" in sentence) and (raise_ := _RAISED.search(sentence)):
            name = entity(raise_.group("name"))
            if name and name not in STOPWORDS and not (product and name == product):
                taken.append((raise_.start(), raise_.end()))  # the lead-in names no one: the product's own list
                add(("min", name, ""), _version(raise_.group("new")), f"{raise_.group('name')} {raise_.group('new')}",
                    plan_here, default_release, "from", _version(raise_.group("old")))
        # --- dependency bounds: "Require Toolkit >= 3.0.0", "toolkit>=8.1.3 is now required"
        if (">" in sentence or "≥" in sentence) and (_BOUND_CONTEXT.search(sentence) or _BOUNDS_ONLY.fullmatch(sentence)):
            for m in BOUND.finditer(sentence):
                # ">= 3.1" is a lower bound as written; "> 3.1" only where the sentence says it is required
                if any(a <= m.start() < b for a, b in taken) or (m.group("op") == ">" and not _SUPPORT_WORDS.search(sentence)):
                    continue
                before = sentence[max(0, m.start() - 30) : m.start()]
                if _CONDITION.search(before) and not _DEPENDS_ON.search(before):
                    continue  # "on Python>=3.12", "when using X>=2": a condition, not a requirement
                name = entity(re.sub(r"\d+$", "", m.group("name")) or m.group("name"))
                if not name or name in STOPWORDS or (product and name == product):
                    continue
                scope, at = whose(sentence[: m.start()])
                taken.append((m.start(), m.end()))
                add(("min", name, scope), _version(m.group("ver")), m.group(0), plan_here, at)
        # --- the version a release uses of something it bundles ("Upgrade to CLDR 45"): said in
        # a release's notes, or of a release the sentence names ("Acme 2.19 ships with CLDR 47")
        uses = "use" in low or "upgrade" in low or "update" in low or "bump" in low or "brings" in low or "bundles" in low \
            or "ships" in low
        if uses and (doc.profile.kind == "release" or _NAMES_RELEASE.match(sentence)) and not plan_here and not past \
                and not _CI_LABEL.match(sentence):  # "Travis CI: Upgrade PyPy from 6.0.0 to 7.1.1": the project's CI
            vendored = [*_VENDORED.finditer(sentence), *_VENDORED_PASSIVE.finditer(sentence)] \
                if "vendored" in low or "bundled" in low or "embedded" in low else []
            vendored += list(_UPDATED_FROM_TO.finditer(sentence)) if " from " in low else []
            for m in [*vendored, *_USES.finditer(sentence)]:
                if any(a <= m.start("name") < b for a, b in taken):
                    continue
                # the verb: before the name, or after it where the sentence speaks of it ("... is updated to")
                clause = sentence[m.start() : m.end() if m.re is compiled(_VENDORED_PASSIVE) else m.start("name")].lower()
                if not re.search(r"upgrade|update|bump|brings|bundles|ships|refresh|\buse", clause):
                    continue  # a name after a colon alone says nothing of using it
                name = entity(m.group("name"))
                if not name or name in STOPWORDS or (product and name == product) \
                        or (m.re is compiled(_UPDATED_FROM_TO) and name in _SECTION_KINDS):
                    continue  # ("Updated the minimum from 3.8 to 3.9" names no thing: _FROM_TO reads it)
                taken.append((m.start() if m.re is compiled(_VENDORED_PASSIVE) else m.start("name"), m.end()))
                scope, at = whose(sentence[: m.start()])
                if name in scope.split():
                    scope = ""  # "The jQuery library is upgraded to jQuery 3.7": the bundled thing itself
                add(("value", name, scope), _version(m.group("ver")), f"{m.group('name')} {m.group('ver')}", False, at)
        # --- what the product bundles, said of it now: "The acme wheels bundle libtoolkit 4.3.4"
        for m in _BUNDLES.finditer(sentence) if ("bundle" in low or "ships" in low or "vendor" in low) and not plan_here \
                and not past else ():
            name = entity(m.group("name"))
            if not name or name in STOPWORDS or (product and name == product) \
                    or any(a <= m.start("name") < b for a, b in taken) or _NEGATION.search(sentence[max(0, m.start() - 25) : m.start()]):
                continue
            taken.append((m.start("name"), m.end()))
            scope, at = whose(sentence[: m.start()])
            add(("value", name, scope), _version(m.group("ver")), f"{m.group('name')} {m.group('ver')}", False, at)
        # --- "increased from A to B"
        for m in _FROM_TO.finditer(sentence) if " from " in low else ():
            if any(a <= m.start("new") < b for a, b in taken):
                continue  # read already ("The bundled acme is updated from 1.2 to 1.3": acme's version)
            # the words nearest the verb name what changed: "... is dropped because jQuery version
            # is updated from 1.11.0 to 3.1.0" is about jQuery, and "... have been updated.
            # c-ares has been updated from ..." (a sentence the splitter left joined) about c-ares
            what = _CLAUSE.split(_SENTENCE_BREAK.split(m.group("what").lower())[-1])[-1]
            if _CI_WHAT.search(what):
                continue  # "Linux CI has been updated from Ubuntu 12.04 to 14.04": the project's own machinery
            words = [w for w in re.findall(r"[a-z][\w+./-]*", what) if w not in STOPWORDS and w not in _SCOPE_SKIP]
            if not words:
                continue
            relation = "min" if "minimum" in what else "default" if "default" in what else "value"
            subject_words = [w for w in words if w not in ("minimum", "default", "supported", "version", "maximum")]
            if not subject_words:
                continue
            # "upgraded from Unicode 15 to Unicode 17" names the thing; "version of PostgreSQL" too
            named = re.search(r"\bfrom\s+([A-Z][\w+.]*)\s+v?\d", m.group(0)) or re.search(r"\bof\s+([A-Z][\w+.]*)", m.group(0)) \
                or re.search(r"\bof\s+[`'*]+([A-Za-z][\w+.-]*)[`'*]+", m.group(0)) \
                or re.search(r"\bversion\s+of\s+(?!the\b|a\b|an\b)([a-z][\w+.-]*[\w+])", what)  # "version of `acme2`", "version of libtoolkit"
            # "The maximum stack depth for ... goroutine profiles has been raised from 32 to 128":
            # what changed is the maximum stack depth, however far from the verb it is said
            quantity = _QUANTITY.search(sentence[: m.end("what")])
            if not named and quantity is not None and quantity.group("qty").lower().split()[-1] not in _NO_QUANTITY:
                relation = "value"
                key_entity = f"{quantity.group('rel').lower()} {_UNMARKED.sub('', quantity.group('qty').lower())}"
            else:
                named = named or _NAME_IN.search(_CLAUSE.split(m.group("what"))[-1])
                key_entity = named.group(1).lower() if named else " ".join(subject_words[-3:])
            taken.append((m.start(), m.end()))
            old_value, new_value = m.group("old"), m.group("new")
            # "changed from version 2 to version 3 in 4.0, and from version 3 to version 4 in 9.0":
            # a chain of changes, the last of them what holds now
            chained, end = _FROM_NEXT.match(sentence, m.end()), m.end()
            while chained is not None and chained.group("old") == new_value:
                old_value, new_value, end = new_value, chained.group("new"), chained.end()
                chained = _FROM_NEXT.match(sentence, end)
            add((relation, product_key(key_entity), ""), _version(new_value),
                sentence[m.start() + _last_break(m.group("what")):end].strip(), plan_here,
                default_release, "from", _version(old_value))
        # --- "requires X 1.2 or later", "defaults to TLS 1.2"
        out.extend(_requirements(doc, sentence, line, default_release, date, product, taken))
        if needs_of:
            for i in range(first, len(out)):
                f = out[i]
                if (product_role(f.key[2], "") is not None or f.key[2] == "aside") and f.key[1] != needs_of:
                    kind_role = f.key[2].split(", ")[0] if f.key[2].split(", ")[0] in ROLES.values() else ""
                    out[i] = replace(f, key=(f.key[0], f.key[1], f"{kind_role}, {needs_of}" if kind_role else needs_of))
    if release_doc:
        out.extend(_bare_drops(doc, out, own))
    # what changes not released yet state is a plan (statements_of: an upcoming release)
    upcoming = {entry[1] for entry in doc.sentences if len(entry) > 7 and entry[7]}
    if upcoming:
        out = [replace(f, plan=True) if f.line in upcoming and not f.plan else f for f in out]
    # a statement read with the sentence that introduces its list is quoted as the file has it
    shown = {(entry[1], entry[0]): entry[8] for entry in doc.sentences if len(entry) > 8 and entry[8]}
    if shown:
        out = [replace(f, sentence=shown[(f.line, f.sentence)]) if (f.line, f.sentence) in shown else f for f in out]
    for table in doc.tables:
        supported = _support_table(doc, table, own)
        out.extend(supported if supported is not None else _row_facts(doc, table))
    return out


# "Drop support for 3.9": the versions alone, the name said in the changelog's other drops
# ... "Drop support for 3.9", "Drop 3.9 support"
_DROP_BARE = lazy(r"\b(?:drop(?:ped|s|ping)?|remove[sd]?|removing)\s+(?:(?:the\s+)?support\s+(?:for|of)\s+"
                  r"(?P<list>\d+\.\d+(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*\d+\.\d+)*)(?![\w.])|"
                  r"(?P<list2>\d+\.\d+(?:\s*(?:,\s*(?:and|or)\b|,|and|or)\s*\d+\.\d+)*)\s+support\b)", re.I)


def _bare_drops(doc: Statements, found: list[Fact], own: str | None) -> list[Fact]:
    """A changelog whose drops name one product, and only one, says its name once and then the
    versions alone ("Drop support for Python 3.8", later "Drop support for 3.9"): those are
    that product's drops too. With no drop that names a product, or drops of two, a bare
    version names nothing."""
    named = {f.key[1]: f.value_text.split()[0] for f in found if f.key[0] == "min" and f.change == "drop" and not f.key[2]}
    if len(named) != 1:
        return []
    (key, shown), = named.items()
    out: list[Fact] = []
    for entry in doc.sentences:
        sentence, line, release, release_date = entry[:4]
        m = _DROP_BARE.search(sentence) if "support" in sentence.lower() else None
        if m is None or _INTENT.search(sentence[: m.start()]):
            continue
        listed = m.group("list") or m.group("list2")
        versions = _versions(listed)
        if versions:
            out.append(Fact(("min", key, ""), max(versions), f"{shown} {listed.strip()}", bool(_PLAN.search(sentence)),
                            release or own, doc.path, sentence, line, release_date or (doc.date if not release else None),
                            doc.series, "drop"))
    return out


def _row_facts(doc: Statements, table: Table) -> list[Fact]:
    """The facts of a table that is no support table: each row's are its own subject's (the
    thing its first cell names), never the document's product's: "| cli | at least Node.js 18 |"
    is the cli's need, "| acme-plugin | ... | requires acme>=8.3 |" the plugin's."""
    out: list[Fact] = []
    rows = Statements(doc.path, doc.title, doc.product, doc.series, doc.date,
                      [(text, line, release, date, "", "table") for _cells, text, line, release, date in table.rows[:5000]],
                      [], doc.profile)
    first = {line: _cell(cells[0]) for cells, _text, line, _release, _date in table.rows[:5000]}
    for f in extract(rows):
        subject = entity(first.get(f.line, "")) or ""
        if not subject or subject == f.key[1]:
            continue
        out.append(replace(f, key=(f.key[0], f.key[1], subject)))
    return out


# a package's name with a version or a lower bound, as a sentence names its own releases: "acme ≥
# 2.2.0", "acme>=2.2", "acme-2.2.0", "acme 2.2"
# ("Acme 2.2" is VERSIONED's: capitalized and spaced, the name may be longer than the word before the number)
_OWN_BOUND = lazy(r"(?<![\w.-])(?P<name>[A-Za-z][\w.]*[A-Za-z0-9])(?P<sep>\s*(?:>=|≥)\s*|-|\s+)v?(?P<ver>\d+(?:\.\d+)+)\b")
# what a versioned name's minimum is said to be, right after it ("... of Python 3.15 is now 3.15b2")
_LINE_MINIMUM = lazy(r"\s+(?:is|has\s+been|becomes?)\s+(?:now\s+)?[`'*]*v?(?P<ver>\d+(?:\.\d+)*(?:[a-z]+\d*)?)")


def _requirements(doc: Statements, sentence: str, line: int, default_release: str | None,
                  date: str | None, product: str | None, taken: list[tuple[int, int]]) -> list[Fact]:
    out: list[Fact] = []
    mentions: list[re.Match[str] | _Mention] = list(_versioned(sentence))
    seen = {(m.start(), m.end()) for m in mentions}
    lows = list(LOWER_AFTER_TRIGGER.finditer(sentence)) if holds_any(sentence, _LOWER_AFTER_WORDS) else []
    lows += [m for m in (LOWER_OR_LATER.finditer(sentence) if holds_any(sentence, _LOWER_OR_LATER_WORDS) else ())
             if (later := _OR_LATER.match(sentence[m.end():])) and _SUPPORT_AFTER.match(sentence[m.end() + later.end():])]
    for low in lows:
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
        # "Use MathJax v4 by default": the verb that opens a sentence reads as part of the name too
        used = _USE_HEAD.match(raw_name) if not head else None
        name = entity(raw_name[head.end():] if head else raw_name[used.end():] if used else raw_name)
        if not name:
            continue
        window = max(0, m.start() - 60)
        before = sentence[window : m.start()]
        after = sentence[m.end() : m.end() + 40]
        relation = None
        trigger_at = None
        who_after = None  # "1.5 or newer is all Acme needs": who needs it, said after the value
        last = _last(_MIN_TRIGGER, sentence, m.start())
        if last is not None and any(a <= last.start() < b for a, b in taken):
            last = None  # a trigger another statement already read ("The minimum X version is now 3.10, as ...")
        if head:
            relation, trigger_at = "min", m.start()
        elif last and m.start() - last.end() <= 35 and not VERSIONED.search(sentence, last.end(), m.start()):
            relation, trigger_at = "min", last.start()
        elif _OR_LATER.match(after) and (support := _last(_SUPPORT_WORDS, sentence, m.start())) is not None:
            relation, trigger_at = "min", support.start()
        elif (later := _OR_LATER.match(after)) and (needed := _SUPPORT_AFTER.match(sentence[m.end() + later.end():])):
            # "A 3.1+ or B 2.8+ is required": what needs them is said before the first of them
            clause = _last(_CLAUSE_END, sentence, m.start())
            relation, trigger_at, who_after = "min", clause.end() if clause else 0, needed.group("who")
        if has_default:
            d = None
            for t in _DEFAULT_TRIGGER.finditer(before):
                d = t
            # the value the default is: right after the words that say so ("defaults to TLS 1.2"),
            # not a version a later phrase names ("defaults to the new resolver in Python 3")
            if d and not VERSIONED.search(before[d.end():]) and len(before) - d.end() <= 12 \
                    and not re.search(r"\b(?:in|on|for|with|under|of)\b", before[d.end():]):
                relation, trigger_at = "default", window + d.start()
            elif (said := _DEFAULT_AFTER.match(after)) is not None and (said.group("is") or used or _USE_BEFORE.search(before)):
                # the default said after its value: "Use MathJax v4 by default", "TLS 1.3 is now the default"
                relation, trigger_at = "default", m.start()
        if relation is None or trigger_at is None:
            continue
        if relation == "min" and (line_of := _LINE_MINIMUM.match(after)) is not None \
                and line_of.group("ver").startswith(m.group("ver")) and line_of.group("ver") != m.group("ver"):
            continue  # "the minimum version of Python 3.15 is now 3.15b2": the oldest build of that line
        lead = sentence[:trigger_at]
        if _PAST.search(lead) or _NEGATION.search(sentence[max(0, trigger_at - 25) : m.start()]):
            continue
        role = _role(sentence, m.start(), spans)
        at = default_release
        if relation == "min":
            scope = _scope(lead + (" " + who_after if who_after else ""), product)
            if head and not lead.strip() and doc.profile.kind == "reference":
                # "Requires Python 3.12+." alone, in a reference page: the need of what the text
                # around it describes (an option, a method), not the product's
                scope = "aside"
            elif not scope and not product and doc.profile.kind != "release":
                # "It requires Python 3.8" in a note with no release in its title: "it" is whatever
                # the note is about, so the note's title stands in (two projects' notes never meet);
                # in a changelog, "Requires X 2.0" is the changelog's product's
                scope = _on_title(doc)
            if scope:
                role = f"{role}, {scope}" if role else scope
                at = _named_release(lead, scope) or at
        if product and name == product and not role:
            continue  # the product requiring itself ("requires Acme 1.21") names no fact key: which feature needs it
        plan = bool(_PLAN.search(sentence, 0, m.start()))
        subject: str | None = None
        if product:
            for s in VERSIONED.finditer(lead):
                if entity(s.group("name")) == product and (s.start(), s.end()) not in values:
                    subject = s.group("ver")
            if subject is None:
                # "acme ≥ 2.2.0 requires Python ≥ 2.6", "acme-2.2 requires ...": the releases
                # from one on, named the way a package's name is written, lowercase or bounded
                subject = _named_release(lead, product)
        if subject is None and not plan:
            subject = at
        values.append((m.start(), m.end()))
        start = m.start() + (head.end() if head else used.end() if used else 0)
        value_text = sentence[start : m.end() + len(_trailing_name(after))].strip()
        out.append(Fact((relation, name, role), _version(m.group("ver")), value_text, plan, subject, doc.path,
                        sentence, line, date, doc.series))
        # "requires Python 3.11, 3.12, 3.13, or 3.14": a closed list of every version that will do
        # names the newest supported too
        listed = _LIST_ON.match(sentence, m.end()) if relation == "min" else None
        if listed is not None and not _OR_LATER.match(sentence[listed.end():]):
            versions = [_version(m.group("ver")), *_versions(listed.group(0))]
            if _is_list(m.group("ver") + listed.group(0), versions):
                out.append(Fact(("max", name, role), max(versions), f"{raw_name[head.end():] if head else raw_name} "
                                f"{dotted(max(versions))}", plan, subject, doc.path, sentence, line, date, doc.series))
    return out


# the versions a list goes on with after its first ("3.11" then ", 3.12, 3.13, or 3.14")
_LIST_ON = lazy(r"(?:\s*,\s*(?:(?:or|and)\s+)?v?\d+(?:\.\d+)*|\s+(?:or|and)\s+v?\d+(?:\.\d+)*(?![\w.]*\w))+")


def _cell(text: str) -> str:
    """A table cell's words: markup and links dropped ("`GEOS <../geos>`" -> "GEOS")."""
    text = re.sub(r":\w+:`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    text = re.sub(r"`([^`<]*?)\s*(?:<[^>]*>)?`_*", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(text.replace("*", "").split())


def _support_table(doc: Statements, table: Table, own: str | None) -> list[Fact] | None:
    """The facts of a support table: a column of versions ("Supported Versions", "Python versions").

    Rows name what is supported ("Toolkit | ... | 3.4, 3.3, 3.2": the oldest listed is the
    minimum, the newest listed the newest), or, where the first column holds the product's own
    versions ("Acme version | Python versions"), each row is one release's support. Any other
    table (a list of plugins and what each requires, a changelog of numbers) states nothing of
    the product: its rows are each their own subject's."""
    header = [_cell(c) for c in table.header or []]
    columns = [i for i, c in enumerate(header) if _VERSION_COLUMN.search(c)]
    if not columns or len(header) < 2:
        return None
    per_release = bool(_VERSION_COLUMN.search(header[0]))
    column = next((i for i in columns if i > 0), None)
    if column is None:
        return None
    # what the column lists the versions of ("Python versions") where it names it
    column_name = entity(_VERSION_COLUMN.sub("", re.sub(r"(?i)\b(?:supported|required|minimum|min|max|maximum)\b\.?", "",
                                                          header[column])).strip(" .:"))
    if per_release and not column_name:
        return None
    who = entity(_VERSION_COLUMN.sub("", header[0])) if per_release else ""
    out: list[Fact] = []
    for cells, text, line, release, date in table.rows[:2000]:
        if len(cells) != len(header):
            continue
        listed = _CELL_NOTE.sub(" ", _cell(cells[column]))
        versions = [version_numbers(v.lstrip("v")) for v in _CELL_VERSIONS.findall(listed)]
        versions = [v for v in versions if v]
        if not versions:
            continue
        name: str | None
        at: str | None
        if per_release:
            at = _cell(cells[0])
            if release_numbers(at) is None:
                continue
            # "8.0 - 8.3": the row's releases, ordered by the newest it covers
            at = re.split(r"\s+[-–]\s+|\s+to\s+", at)[-1]
            shown_name = re.sub(r"[^\w.+ -]", "", (column_name or "")).strip()
            spelled = re.search(rf"(?i)\b{re.escape(shown_name)}\b", header[column]) if shown_name else None
            name, role, shown = column_name, who or "", f"{spelled.group(0) if spelled else shown_name} {listed.strip()}"
        else:
            name = entity(_cell(cells[0]))
            if not name or name in STOPWORDS or not re.match(r"[a-z]", name):
                continue
            role, shown = "", f"{_cell(cells[0])} {listed.strip()}"
            at = release or own
        newest = max(versions) if len(versions) > 1 else ()
        if not name:
            continue
        out.append(Fact(("min", name, role), min(versions), " ".join(shown.split()), False, at, doc.path, text, line,
                        date or doc.date, doc.series, "", (), newest))
    return out


def label(key: tuple[str, str, str], sample: Fact | None = None, others: Iterable[Fact] = ()) -> str:
    """"minimum macOS version", "default TLS version (server)": what a fact is about, in words
    (a default of a setting spelled as the sentences spell it: `sample`'s, else the first of
    `others` that names it; "Default: 30" under a setting's heading does not)."""
    relation, name, role = key
    if relation == "choice":
        # the sentence's own spelling of what the default is of ("DBAPI driver", "`junit_family`")
        pattern = r"[\s`*]+(?:the\s+)?".join(re.escape(w) for w in name.split())
        spelled = next(filter(None, (re.search(rf"(?<![\w.]){pattern}(?![\w])", f.sentence, re.IGNORECASE)
                                     for f in (*((sample,) if sample else ()), *others))), None)
        shown = re.sub(r"[`*]", "", re.sub(r"\s+", " ", spelled.group(0))) if spelled else name
        return f"default {shown}" + (f" ({role})" if role else "")
    size = len(name.split())
    shown = name
    if sample is not None and sample.value_text:
        words = re.sub(r"[><=≥]+.*$", "", sample.value_text).split()
        if words and relation != "value" and sample.change != "from" and not re.match(r"\d", words[0]):
            written = " ".join(words[:size])
            # another spelling of the name ("CPython" for Python) is shown as the name it stands for
            shown = written if product_key(written.lower()) == written.lower() else name[:1].upper() + name[1:]
    if name == "macos":
        shown = "macOS"
    elif shown == name and sample is not None:
        # the sentence's own spelling of the name ("jQuery", "MathJax"), not the key's
        spelled = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", sample.sentence, re.IGNORECASE)
        shown = spelled.group(0) if spelled else name
    if sample is not None and sample.change == "from" and relation == "value":
        return f"{shown}" + (f" ({role})" if role else "")
    if relation == "value":
        return f"{shown} version" + (f" ({role})" if role else "")
    what = _LABELS.get(relation, relation)
    if relation == "max":
        return f"newest {shown} version supported" + (f" ({role})" if role else "")
    return f"{what} {shown} version" + (f" ({role})" if role else "")
