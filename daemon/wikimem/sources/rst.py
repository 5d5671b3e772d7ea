"""reStructuredText through docutils, with Sphinx's roles and directives read for their text.

docutils parses the document (titles, sections, lists, tables, literal blocks, field lists)
and keeps line numbers; Sphinx's markup is not registered in plain docutils, so it is
handled here while a parse runs: roles become the text Sphinx would show (`:class:`~a.b.Model``
is `Model`, `:ref:`text <target>`` is "text"), `.. versionadded:: X` becomes a statement tied
to version X, `.. py:data:: NAME` a definition of NAME, `.. toctree::` the reading order,
`.. code-block::` code; any other directive or role degrades to its text, never to debris or
an error. File insertion (`.. include::`, `:file:` options) and raw output are off: parsing a
source never reads another file.

docutils is imported inside the functions that parse (it takes a tenth of a second to load):
a workspace without reST never loads it.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from types import FunctionType, MethodType
from typing import Any

from ..patterns import lazy
from . import xref
from .document import SIGNATURE, Block, TocEntry, counted
from .inline import (
    ABSOLUTE_URL,
    ADMONITION_LABELS,
    CODE_ROLES,
    EXPLICIT,
    OPTION_LINE,
    REF_ROLES,
    code_span,
    keep_lines,
    role_text,
)

# an inline text longer than this is not prose a person wrote (a line of 200,000 roles):
# docutils' inline patterns are superlinear on some of them, so such text is kept as it is
MAX_INLINE = 20_000
# the name in a signature, after what may come before it: "class", "async", a C type with its
# pointer marks ("PyObject* Acme_New(...)", "const char *acme_name(void)")
_SIGNATURE_NAME = lazy(r"^\s*(?:[\w.:]+(?:\s+|\s*[*&]+\s*))*?([~\w.:-]+[\w]|[\w])\s*(?:\(|\[|$|\s*(?:=|:(?!:)))")
_PEP_FIELD = lazy(r"^([A-Z][A-Za-z-]+):[ \t]+(.*)$")

VERSION_LABELS = {
    "versionadded": "New in version", "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
}
CODE_DIRECTIVES = frozenset(
    "code-block sourcecode doctest testcode testoutput testsetup testcleanup productionlist prompt "
    "ipython jupyter-execute graphviz digraph graph mermaid plot code-tab".split())
SILENT_DIRECTIVES = frozenset(
    "highlight currentmodule sectionauthor moduleauthor codeauthor tabularcolumns todolist "
    "program default-domain literalinclude autosummary-toctree".split())
API_DIRECTIVES = frozenset(
    "function class method classmethod staticmethod attribute property data exception module "
    "decorator decoratormethod type const member macro var struct union enum enumerator option "
    "cmdoption envvar confval setting describe object directive role event fixture "
    "autoclass autofunction automodule autodata autoattribute automethod autoexception "
    "autodecorator autoproperty autonewtypedata".split())
CONTAINER_DIRECTIVES = frozenset(
    "ifconfig tab tabs group-tab tab-set tab-item grid grid-item grid-item-card card dropdown "
    "centered hlist cssclass versionchanges".split())


@dataclass
class RstResult:
    blocks: list[Block]
    title: str | None = None
    meta: dict[str, str] = field(default_factory=dict)
    toc: list[TocEntry] = field(default_factory=list)
    keywords: list[tuple[str, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    first_of_several: bool = False  # the title is the first of the document's sections, not its own
    changes: int = 0  # `.. change::` entries (a changelog extension's), for a fragment that holds only them
    labels: list[tuple[str, int, str | None]] = field(default_factory=list)  # `.. _label:` (name, line, title)
    title_from: str | None = None  # an include before the first title: the file whose title Sphinx shows


MAX_NESTING = 100  # levels of indented structure (lists in lists, quotes, directive bodies) docutils is given


class NestedTooDeep(ValueError):
    """A reST text nested deeper than MAX_NESTING levels: docutils parses each level as a copy of
    the lines below it, so memory grows with depth times size (3,000 nested lists in 9 MB took
    2.7 GB). No document nests so deep; such a text is read as plain text."""


def nesting(text: str) -> int:
    """How many levels of indentation the text's lines step into (each deeper indent opens one,
    a shallower one closes those deeper than it), in one pass."""
    stack = [0]
    deepest = 0
    for line in text.split("\n"):
        stripped = line.lstrip(" \t")
        if not stripped:
            continue
        indent = len(line) - len(stripped)
        while indent < stack[-1]:
            stack.pop()
        if indent > stack[-1]:
            stack.append(indent)
            deepest = max(deepest, len(stack) - 1)
    return deepest


def parse_rst(text: str, line_offset: int = 0) -> RstResult:
    """Blocks of a reST text; `line_offset` lines come before it in the file. NestedTooDeep for
    a text nested deeper than MAX_NESTING levels (never handed to docutils)."""
    from docutils import utils

    depth = nesting(text)
    if depth > MAX_NESTING:
        raise NestedTooDeep(f"reStructuredText nested {depth} levels deep (more than {MAX_NESTING})")
    text, meta, header_lines = _pep_header(text)
    offset = line_offset + header_lines
    settings = _settings()
    document = utils.new_document("<source>", settings)
    errors: list[str] = []

    def observe(message: Any) -> None:
        if message["level"] >= 3 and len(errors) < 20:
            line = message.get("line")
            said = message[0].astext() if message.children else message.astext()
            errors.append(" ".join(said.split())[:100] + (f" (line {line + offset})" if line else ""))

    document.reporter.attach_observer(observe)
    document["wikimem_toc"] = []
    document["wikimem_keywords"] = []
    reader = _Reader(text.split("\n"), offset)
    with _sphinx_markup():
        _parser().parse(text, document)
        reader.read(document)
    result = RstResult(reader.blocks, reader.title, {**meta, **reader.meta},
                       [TocEntry(t, title, line + offset, group) for t, title, line, group in document["wikimem_toc"]],
                       [(k, line + offset) for k, line in document["wikimem_keywords"]], errors,
                       reader.first_of_several, document.get("wikimem_changes", 0),
                       [(name, line, title) for name, line, title in reader.labels], reader.title_from)
    return result


def _pep_header(text: str) -> tuple[str, dict[str, str], int]:
    """A PEP's RFC 822 header ("PEP: 8", "Title: ...", "Created: ...") as metadata; the body
    follows it (docutils' PEP reader does the same)."""
    if not re.match(r"(?:PEP|Title|Author):", text):
        return text, {}, 0
    lines = text.split("\n")
    meta: dict[str, str] = {}
    key = None
    end = 0
    for i, line in enumerate(lines):
        if not line.strip():
            end = i
            break
        match = _PEP_FIELD.match(line)
        if match:
            key = match.group(1).lower()
            meta[key] = match.group(2).strip()
        elif line[:1].isspace() and key:
            meta[key] += " " + line.strip()
        else:
            return text, {}, 0
    else:
        end = len(lines)
    if "title" not in meta:
        return text, {}, 0
    return "\n".join(lines[end:]), meta, end


# --- the parser, with Sphinx's markup while it runs ------------------------------------------


@lru_cache(maxsize=1)
def _settings() -> Any:
    from docutils import frontend
    from docutils.parsers.rst import Parser

    settings = frontend.get_default_settings(Parser)
    settings.report_level = 5  # nothing to stderr: problems are counted by an observer
    settings.halt_level = 5
    settings.warning_stream = io.StringIO()
    settings.file_insertion_enabled = False  # .. include::, :file: and :url: options read nothing
    settings.raw_enabled = False
    settings.syntax_highlight = "none"
    settings.smart_quotes = False
    settings.pep_references = False
    settings.rfc_references = False
    settings.line_length_limit = 10**9  # long lines are handled by _Inliner (linear)
    settings.character_level_inline_markup = False
    return settings


def _parser() -> Any:
    """A parser for one document: docutils' Inliner adds its implicit patterns on every run, so
    a shared one would scan each text with one more URI pattern per document parsed before."""
    from docutils.parsers.rst import Parser

    return Parser(inliner=_inliner_class()())


@lru_cache(maxsize=1)
def _inliner_class() -> type:
    from docutils import nodes
    from docutils.parsers.rst import roles, states

    class Inliner(states.Inliner):  # type: ignore[misc]
        def init_customizations(self, settings: Any) -> None:
            super().init_customizations(settings)
            for name in ("initial", "interpreted_or_phrase_ref"):
                setattr(self.patterns, name, _leaner(getattr(self.patterns, name)))

        def parse(self, text: str, lineno: int, memo: Any, parent: Any) -> Any:
            if len(text) > MAX_INLINE:
                return [nodes.Text(text)], []
            if not any(mark in text for mark in _INLINE_MARKS):
                # no start-string can match (and no escape to undo): docutils would search for one,
                # find none and look for implicit markup only; do that, as it does
                self.document, self.language, self.parent = memo.document, memo.language, parent
                self.reporter = self.document.reporter
                return self.implicit_inline(text, lineno), []
            return super().parse(text, lineno, memo, parent)

        def implicit_inline(self, text: str, lineno: int) -> Any:
            # with PEP and RFC references off (_settings), the one implicit pattern is a standalone
            # URI or an e-mail address: neither is in a text without ":" and "@"
            if len(self.implicit_dispatch) == 1 and ":" not in text and "@" not in text:
                return [nodes.Text(text)] if text else []
            return super().implicit_inline(text, lineno)

        def interpreted(self, rawsource: str, text: str, role: str, lineno: int) -> Any:
            if not role:
                return [_default_role_node(text, rawsource)], []
            name = role.lower()
            short = name.rsplit(":", 1)[-1]
            if name in _DOCUTILS_ROLES:
                return super().interpreted(rawsource, text, role, lineno)
            if short in CODE_ROLES or short in REF_ROLES or (short in ("pep", "rfc") and not text.strip().isdigit()):
                return [_role_node(short, text, rawsource)], []
            if short == "release" or (short in _CHANGE_KINDS and _CHANGE_ROLE.fullmatch(text.strip())):
                return [_changelog_role(short, text, rawsource)], []
            # the default role, or one the document defined with `.. role::`: docutils knows it
            known, _ = roles.role(role, self.language, lineno, self.reporter)
            if known is not None:
                return super().interpreted(rawsource, text, role, lineno)
            return [_role_node(short, text, rawsource)], []

    # Inliner.init_customizations formats its patterns with vars(self.__class__): a subclass
    # must carry the base class's pattern strings itself
    for key, value in vars(states.Inliner).items():
        if isinstance(value, str) and not key.startswith("__"):
            setattr(Inliner, key, value)
    return Inliner


# docutils spells "a word character but an underscore" with a look-ahead before every character
# of a reference name, and the search for the next inline markup tries one at every word
_NOT_UNDERSCORE = "(?:(?!_)\\w)"


@lru_cache(maxsize=8)
def _leaner(pattern: re.Pattern[str]) -> re.Pattern[str]:
    r"""One of docutils' inline patterns with `(?:(?!_)\w)` written `[^\W_]` (the same characters, one
    class test each): the search for the next start-string, the most of reading a paragraph
    with markup, a fifth faster (the same matches over the Sphinx trees' paragraphs)."""
    return re.compile(pattern.pattern.replace(_NOT_UNDERSCORE, r"[^\W_]"), pattern.flags)


# every start-string and whole construct of docutils' inline markup has one of these, and an
# escape is a backslash: a text with none of them is plain text (or a standalone URI)
_INLINE_MARKS = ("*", "`", "_", "|", "\\")


# roles docutils itself defines (and `.. role::` may derive from): it renders them
_DOCUTILS_ROLES = frozenset(
    "emphasis strong literal code math subscript sub superscript sup title-reference title t "
    "pep-reference rfc-reference abbreviation ab acronym ac raw".split())


# interpreted text without a role that names something in code: a dotted or underscored name,
# a call, a name with capitals or digits inside (`attrs.define`, `url_for()`, `HashMap`, `utf8`)
_CODE_NAME = lazy(r"[~!.]*[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?")
_REFERENCE_NAME = lazy(r"[a-z][a-z0-9]*(?:[-/][a-z0-9]+)*")


def _default_role_node(text: str, rawsource: str) -> Any:
    """Interpreted text without a role (`like this`), as documentation sets use it: Sphinx
    projects set a default role that finds an object or a page (`any`, `py:obj`), docutils'
    own is a title reference (shown in italics). A name in code is a code span; a lowercase
    word that may name a page or a label (`names`, `how-to`) is a reference the offline
    backend resolves (sources/xref.py), shown as written when nothing answers it; anything
    else (a book's title) is docutils' title reference, read as its text."""
    from docutils import nodes, utils

    written = " ".join(utils.unescape(text).split())
    explicit = EXPLICIT.match(written)
    if explicit and explicit.group(1).strip():
        # `title <target>`: Sphinx shows the title, in code where the target is a name in code
        title, target = explicit.group(1).strip(), explicit.group(2).strip()
        if _names_code(target):
            return nodes.literal(rawsource, title)
        return nodes.Text(title)
    if _REFERENCE_NAME.fullmatch(written):
        return nodes.Text(xref.mark("any", written))
    if _names_code(written):
        shown, _ = role_text("obj", written)
        return nodes.literal(rawsource, shown)
    return nodes.title_reference(rawsource, written)


# a changelog written as one list (the releases extension): `:release:`3.0.3 <2026-04-07>`` is an
# item that opens a release; `:bug:`742``, `:feature:`-``, `:support:`- backported`` say what
# kind of change an item is, its issue number (or "-" for none) and keywords
_CHANGE_KINDS = frozenset({"bug", "feature", "support"})
_CHANGE_ROLE = lazy(r"(?:\d+|-)(?:\s+[a-z][a-z-]*)*")


def _changelog_role(role: str, text: str, rawsource: str) -> Any:
    """A release's item (a node that knows its version and date; list_items makes it a heading),
    or a change's kind, shown "Bug #742:" or "Support (backported):" before its text."""
    from docutils import nodes, utils

    written = " ".join(utils.unescape(text).split())
    if role == "release":
        explicit = EXPLICIT.match(written)
        version, date = (explicit.group(1).strip(), explicit.group(2).strip()) if explicit else (written, "")
        node = nodes.inline(rawsource, f"{version} ({date})" if date else version)
        node["wikimem_release"] = version
        return node
    number, *keywords = written.split()
    shown = role.title() + (f" #{number}" if number.isdigit() else "") + (f" ({', '.join(keywords)})" if keywords else "")
    return nodes.Text(shown + ":")


def _names_code(text: str) -> bool:
    """A name in code (`attrs.define`, `url_for()`, `HashMap`, `utf8`, `DEBUG`), not a word."""
    return bool(_CODE_NAME.fullmatch(text)) and (re.search(r"[._:(]|\d|[a-z][A-Z]", text) is not None or text.isupper())


def _role_node(role: str, text: str, rawsource: str) -> Any:
    """What Sphinx shows for a role, as a docutils node."""
    from docutils import nodes, utils

    if role in ("ref", "doc"):
        # a reference to another place of the set: a mark the offline backend resolves (xref.py)
        written = utils.unescape(text)
        explicit = EXPLICIT.match(written)
        target, given = (explicit.group(2), explicit.group(1)) if explicit else (written, "")
        target = target.strip().lstrip("~!")
        if target:
            key = nodes.fully_normalize_name(target) if role == "ref" else target
            return nodes.Text(xref.mark(role, key, given.strip()))
    shown, how = role_text(role, utils.unescape(text))
    if how == "code":
        return nodes.literal(rawsource, shown)
    if how == "emphasis":
        return nodes.emphasis(rawsource, shown)
    return nodes.Text(shown)


_MARKUP_LOCK = threading.Lock()


@lru_cache(maxsize=256)
def _lenient(directive: type) -> type:
    """One of docutils' own directives, taking the options Sphinx adds to it as Sphinx does
    (`.. note::` with `:collapsible:`, a figure's `:name:`): docutils turned the whole directive
    into an error and its text was lost. The options it knows are still checked."""
    spec = getattr(directive, "option_spec", None)
    if not spec or isinstance(spec, _AnyOptions):
        return directive  # no options at all: docutils reads an option line as its content
    return type(directive.__name__, (directive,), {"option_spec": _AnyOptions(spec)})


@contextmanager
def _sphinx_markup() -> Iterator[None]:
    """Sphinx's directives, and any unknown one, for the time of one parse and its reading
    (with docutils' hot paths made leaner: a transition bound when it matches, state
    machines kept, a node's document found once, a line read straight from its list, a block's
    lines iterated as a list, unescape skipped where there is nothing to unescape).

    docutils looks directives up through one module-level function; it is swapped here and
    put back after, so nothing outside a wikimem parse sees Sphinx's names (the lock keeps
    two threads from interleaving the swap).
    """
    from docutils import statemachine
    from docutils.parsers.rst import directives

    table = _directive_table()
    with _MARKUP_LOCK:
        original = directives.directive
        original_transitions = statemachine.State.make_transitions

        def lookup(name: str, language: Any, document: Any) -> tuple[Any, list[Any]]:
            normal = name.lower()
            short = normal.rsplit(":", 1)[-1] if ":" in normal else normal
            if normal in table:
                return table[normal], []
            if ":" in normal and short in table and short != "class":
                return table[short], []
            found, messages = original(name, language, document)
            return (_lenient(found), messages) if found is not None else (table["*"], [])

        from docutils import nodes
        from docutils import utils as docutils_utils
        from docutils.parsers.rst import states

        original_check = statemachine.StateMachine.check_line
        original_next = statemachine.StateMachine.next_line
        original_init = statemachine.StateMachine.runtime_init
        original_list_parse = states.RSTState.nested_list_parse
        original_setup = nodes.Node.setup_child
        original_unescape = nodes.unescape
        original_assemble = docutils_utils.assemble_option_dict
        original_iter = statemachine.ViewList.__dict__.get("__iter__")

        def assemble(option_list: list[tuple[str, str | None]], spec: Any) -> Any:
            # an option written twice (a release's `:released:` given again) keeps its last
            # value, as a later setting overrides an earlier one: docutils refused the whole
            # directive, and the text it holds (that release's notes) was lost
            return original_assemble(list(dict(option_list).items()), spec)

        def unescape(text: str, restore_backslashes: bool = False, respect_whitespace: bool = False) -> str:
            # docutils' unescape splits and joins the text three times: nothing to do without a
            # null (a backslash escape), the case of nearly every text node the reader reads
            if "\x00" not in text:
                return text
            return original_unescape(text, restore_backslashes, respect_whitespace)  # type: ignore[no-any-return]

        directives.directive = lookup
        statemachine.State.make_transitions = _make_transitions
        statemachine.StateMachine.check_line = _check_line
        statemachine.StateMachine.next_line = _next_line
        statemachine.StateMachine.runtime_init = _runtime_init
        states.RSTState.nested_list_parse = _nested_list_parse
        nodes.Node.setup_child = _setup_child
        nodes.unescape = unescape
        docutils_utils.assemble_option_dict = assemble
        statemachine.ViewList.__iter__ = _view_lines
        try:
            yield
        finally:
            directives.directive = original
            statemachine.State.make_transitions = original_transitions
            statemachine.StateMachine.check_line = original_check
            statemachine.StateMachine.next_line = original_next
            statemachine.StateMachine.runtime_init = original_init
            states.RSTState.nested_list_parse = original_list_parse
            nodes.Node.setup_child = original_setup
            nodes.unescape = original_unescape
            docutils_utils.assemble_option_dict = original_assemble
            if original_iter is None:
                del statemachine.ViewList.__iter__
            else:
                statemachine.ViewList.__iter__ = original_iter


def _view_lines(self: Any) -> Iterator[str]:
    """Iterating a ViewList (a block's lines, joined or looped over): the iterator of its list of
    lines. ViewList defines no __iter__, so Python iterated it by calling its __getitem__ with 0,
    1, 2, ... up to an IndexError, a Python call for each line, which returns that list's item."""
    return iter(self.data)


def _runtime_init(self: Any) -> None:
    """docutils' StateMachine.runtime_init, skipped when the machine's states were initialised
    for the same parse (memo) already: a state takes nothing else from it, and a nested parse
    (every list item, every directive body) runs a reused machine of 15 states."""
    memo = getattr(self, "memo", None)
    done = self.__dict__.get("_wikimem_memo")
    if memo is not None and done is not None and done[0] is memo and done[1] == len(self.states):
        return
    for state in self.states.values():
        state.runtime_init()
    # the memo itself (its states hold it already), never its id: another parse's may reuse that
    self._wikimem_memo = None if memo is None else (memo, len(self.states))


def _setup_child(self: Any, child: Any) -> None:
    """docutils' Node.setup_child, finding the node's document once, by a walk up its parents
    (Node.document asks four times, and a node not yet in a tree, as docutils makes most of
    them, answers through an AttributeError caught)."""
    child.parent = self
    node = self
    document = node._document
    while document is None:
        node = node.parent
        if node is None:
            return
        document = node._document
    child._document = document
    if child.source is None:
        child.source = document.current_source
    if child.line is None:
        child.line = document.current_line


def _next_line(self: Any, n: int = 1) -> str:
    """docutils' StateMachine.next_line, taking the line, and the source and offset its
    observers are told, from the lists under the input's view (what ViewList.__getitem__ and
    ViewList.info do for a number): three calls less for every line of every nested parse."""
    self.line_offset += n
    try:
        self.line = self.input_lines.data[self.line_offset]
    except IndexError:
        self.line = None
        raise EOFError from None
    finally:
        if self.observers:
            try:
                source, offset = self.input_lines.items[self.line_offset]
            except IndexError:  # past the end: notify_observers says so as docutils does
                self.notify_observers()
            else:
                for observer in self.observers:
                    observer(source, offset)
    return self.line  # type: ignore[no-any-return]


_TRANSITIONS: dict[tuple[type, tuple[Any, ...]], tuple[list[str], dict[str, tuple[Any, Any, str]]]] = {}


class _Transitions(dict):  # type: ignore[type-arg]
    """A state's transitions, (pattern, method, next state) by name, sharing one table per state
    class: the methods are bound to the state when docutils looks one up, not when the state is
    made. A nested parse (every list item, every directive body) makes a state machine of 15
    states; binding every method of each was a quarter of the parse time."""

    __slots__ = ("state",)
    state: Any

    def __getitem__(self, name: str) -> tuple[Any, Any, str]:
        pattern, method, next_state = dict.__getitem__(self, name)
        if type(method) is FunctionType:
            method = MethodType(method, self.state)
        return pattern, method, next_state


# kept from one parse to the next, as docutils keeps nested_parse's: a machine's states are
# initialised again for each parse (_runtime_init), and hold the last parse's document until then
_MACHINES: dict[tuple[Any, ...], list[Any]] = {}


def _nested_list_parse(self: Any, block: Any, input_offset: int, node: Any, initial_state: str,
                       blank_finish: bool, blank_finish_state: str | None = None,
                       extra_settings: dict[str, Any] | None = None, match_titles: bool = False,
                       state_machine_class: Any = None, state_machine_kwargs: Any = None) -> tuple[int, bool]:
    """docutils' RSTState.nested_list_parse, with its state machines kept for the next list of
    the same kind, in this document or the next (docutils keeps nested_parse's the same way),
    rather than made for every list item, definition and field: making one makes all its states."""
    machine_class = state_machine_class or self.nested_sm
    kwargs = dict(self.nested_sm_kwargs if state_machine_kwargs is None else state_machine_kwargs)
    kwargs["initial_state"] = initial_state
    # the state classes themselves, never their list's id(): a list made for one parse and freed
    # may leave its id to another list of other classes, and a machine of the wrong states was
    # taken from the pool (a document's later sections were read at the wrong level, now and then)
    key = (machine_class, initial_state, tuple(kwargs.get("state_classes") or ()), tuple(sorted(extra_settings or ())))
    pool = _MACHINES.setdefault(key, [])
    # made without `parent_state_machine`: docutils before 0.21 takes no such argument (every
    # reST file then failed with a TypeError); it is set here, as each run sets it
    machine = pool.pop() if pool else machine_class(debug=self.debug, **kwargs)
    machine.parent_state_machine = self.state_machine
    finish_state = blank_finish_state or initial_state
    machine.states[finish_state].blank_finish = blank_finish
    for name, value in (extra_settings or {}).items():
        setattr(machine.states[initial_state], name, value)
    machine.run(block, input_offset, memo=self.memo, node=node, match_titles=match_titles)
    blank_finish = machine.states[finish_state].blank_finish
    offset = machine.abs_line_offset()
    machine.parent_state_machine = machine.node = machine.memo = None
    pool.append(machine)  # only after a run that ended normally
    return offset, blank_finish


def _check_line(self: Any, context: Any, state: Any, transitions: Any = None) -> Any:
    """docutils' StateMachine.check_line (without its debug output), binding a transition's
    method only when its pattern matches: most lines are tried against a dozen patterns."""
    if transitions is None:
        transitions = state.transition_order
    table = state.transitions
    line = self.line
    for name in transitions:
        pattern, method, next_state = dict.__getitem__(table, name)
        match = pattern.match(line)
        if match:
            if type(method) is FunctionType:
                method = MethodType(method, state)
            return method(match, context, next_state)
    return state.no_match(context, transitions)


def _make_transitions(self: Any, name_list: Any) -> tuple[list[str], dict[str, tuple[Any, Any, str]]]:
    """docutils' State.make_transitions, with the patterns compiled once per state class and the
    methods left unbound: the state's table (made a _Transitions here) binds them on lookup."""
    key = (type(self), tuple(name_list))
    cached = _TRANSITIONS.get(key)
    if cached is None:
        names = []
        made = {}
        for entry in name_list:
            name, next_state = (entry, None) if isinstance(entry, str) else (entry[0], entry[1] if len(entry) > 1 else None)
            pattern, _method, state = self.make_transition(name, next_state)
            names.append(name)
            made[name] = (pattern, getattr(type(self), name), state)
        cached = _TRANSITIONS[key] = (names, made)
    if type(self.transitions) is not _Transitions:  # docutils then adds them with dict.update
        table = _Transitions(self.transitions)
        table.state = self
        self.transitions = table
    return list(cached[0]), cached[1]


class _AnyOptions(dict):  # type: ignore[type-arg]
    """An option spec that takes every option (Sphinx directives have many; none matter here)."""

    def __missing__(self, key: str) -> Any:
        from docutils.parsers.rst import directives

        return directives.unchanged


@lru_cache(maxsize=1)
def _directive_table() -> dict[str, type]:
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives
    from docutils.parsers.rst.directives.misc import Class as DocutilsClass

    any_options = _AnyOptions(name=directives.unchanged)

    class Base(Directive):  # type: ignore[misc]
        required_arguments = 0
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = any_options
        has_content = True

        def container(self, **attributes: Any) -> Any:
            node = nodes.container()
            node.line = self.lineno
            for key, value in attributes.items():
                node[key] = value
            return node

        def inline_para(self, text: str) -> Any:
            inline, _ = self.state.inline_text(text, self.lineno)
            para = nodes.paragraph(text, "", *inline)
            para.line = self.lineno
            return para

        def option_line(self, name: str) -> int:
            """The line of the directive's `:name:` option (the directive's own line without one)."""
            lines = self.block_text.split("\n")
            return self.lineno + next((k for k, text in enumerate(lines) if text.strip().startswith(f":{name}:")), 0)

        def body(self, node: Any, titles: bool = False) -> Any:
            """The content parsed into `node`; with `titles`, section titles in it open sections
            of their own levels, as Sphinx's nested_parse_with_titles reads a module's page."""
            if not self.content:
                return node
            if not titles:
                self.state.nested_parse(self.content, self.content_offset, node)
                return node
            memo = self.state.memo
            styles, level = memo.title_styles, memo.section_level
            memo.title_styles, memo.section_level = [], 0
            try:
                self.state.nested_parse(self.content, self.content_offset, node, match_titles=True)
            finally:
                memo.title_styles, memo.section_level = styles, level
            # docutils gives a section opened in nested content no line: its title's, found in
            # the content in turn (the line of its underline, as a top-level section's)
            at = 0
            for section in node.findall(nodes.section):
                if section.line or not section.children or not isinstance(section[0], nodes.title):
                    continue
                title = section[0].rawsource.strip()
                for k in range(at, len(self.content) - 1):
                    if self.content[k].strip() == title:
                        section.line = section[0].line = self.content_offset + k + 2
                        at = k + 1
                        break
            return node

    class Code(Base):
        def run(self) -> list[Any]:
            text = "\n".join(self.content)
            if not text.strip():
                return []
            block = nodes.literal_block(text, text)
            block.line = self.content_offset + 1
            return [block]

    class Silent(Base):
        def run(self) -> list[Any]:
            return []

    class Version(Base):
        required_arguments = 1

        def run(self) -> list[Any]:
            text = " ".join(self.arguments).split(None, 1)
            node = self.container(wikimem_version=text[0], wikimem_label=VERSION_LABELS[self.name.rsplit(":", 1)[-1]])
            if len(text) > 1:
                node += self.inline_para(text[1])
            return [self.body(node)]

    class Admonition(Base):
        def run(self) -> list[Any]:
            label = ADMONITION_LABELS.get(self.name.rsplit(":", 1)[-1], "Note")
            node = self.container(wikimem_label=label)
            if self.arguments:
                node += self.inline_para(self.arguments[0])
            return [self.body(node)]

    class Api(Base):
        def run(self) -> list[Any]:
            # a signature per line; a line ended by a backslash goes on on the next (Sphinx's
            # "run_app(app, *, host=None, \" over several lines is one signature)
            signatures = [" ".join(line.split()) for line in
                          _CONTINUED.sub(" ", self.arguments[0] if self.arguments else "").split("\n")]
            names = [n for n in (_api_name(line) for line in signatures) if n]
            if not names and self.name.rsplit(":", 1)[-1] == "module":
                names = [a.strip() for a in self.arguments[:1]]
            node = self.container(wikimem_terms=names, wikimem_api=True)
            for signature in signatures:
                if _KEYWORD_DEFAULT.search(signature) and "`" not in signature:
                    # the page shows the signature, whose keyword defaults are the parameters'
                    # defaults ("shutdown_timeout=60.0"): what a reader asks of them
                    node += self.inline_para(f"{SIGNATURE}``{signature}``.")
            default = " ".join(str(self.options.get("default") or "").split())
            if default and names:
                # a described object's `:default:` option (a setting's, in a configuration
                # reference) is its default, as the rendered page states it
                para = self.inline_para(f"Default: {default}.")
                para.line = self.option_line("default")
                node += para
            # a module's description may hold sections (autodoc parses it with titles): a
            # hand-written reference of a module, its settings listed under their own headings
            return [self.body(node, titles=self.name.rsplit(":", 1)[-1] == "automodule")]

    class ClassDirective(Api):
        """`.. class::` is Sphinx's Python class in a Sphinx tree and docutils' class attribute
        elsewhere; a docutils class name is a lowercase identifier, a Python class is not."""

        def run(self) -> list[Any]:
            argument = self.arguments[0] if self.arguments else ""
            if re.search(r"[A-Z(.]", argument):
                return super().run()
            docutils_class = DocutilsClass(self.name, self.arguments, {}, self.content, self.lineno,
                                           self.content_offset, self.block_text, self.state, self.state_machine)
            return docutils_class.run()

    class Toctree(Base):
        def run(self) -> list[Any]:
            document = self.state.document
            caption = str(self.options.get("caption") or "").strip() or None
            for at, entry in enumerate(self.content):
                entry = entry.strip()
                if not entry or entry == "self":
                    continue
                line = self.content_offset + at + 1  # the entry's own line (1-based, in the text parsed)
                explicit = EXPLICIT.match(entry)
                if explicit:
                    document["wikimem_toc"].append((explicit.group(2).strip(), explicit.group(1).strip(), line, caption))
                else:
                    document["wikimem_toc"].append((entry, None, line, caption))
            return []

    class Index(Base):
        def run(self) -> list[Any]:
            document = self.state.document
            # an entry a line (the argument runs over lines: "pair: a; b" then "single: c")
            entries = [line for argument in self.arguments for line in argument.split("\n")] + list(self.content)
            for entry in entries:
                entry = entry.strip().lstrip("!").strip()  # "!": the main entry of several
                kind = re.match(r"(single|pair|triple|see|seealso|module|keyword|operator|object|"
                                r"exception|statement|builtin)\s*:\s*", entry)
                terms = [t.strip() for t in re.split(r"[;,]", entry[kind.end():] if kind else entry)]
                if kind and kind.group(1) == "pair" and len(terms) == 2:
                    # "pair: automatic; documentation" indexes "automatic documentation" under
                    # both of its words: the pair is the term, not either word alone
                    terms = [" ".join(terms)]
                for term in terms:
                    if term:
                        document["wikimem_keywords"].append((term, self.lineno))
            return []

    class Include(Base):
        required_arguments = 1

        def run(self) -> list[Any]:
            target = self.arguments[0].strip()
            if target.startswith("<"):
                return []  # one of docutils' own definition files (<s5defs.txt>, <isonum.txt>)
            # a reference to the file included, as a page shows a `:doc:` (its title, linked):
            # parsing reads no other file
            para = nodes.paragraph("", "", nodes.Text("Includes "), nodes.Text(xref.mark("doc", target)),
                                   nodes.Text("."))
            para["wikimem_include"] = target
            # from its top: a part that starts after a marker may not hold the file's title
            para["wikimem_from_top"] = not ({"start-after", "start-line"} & set(self.options))
            para.line = self.lineno
            return [para]

    class Container(Base):
        def run(self) -> list[Any]:
            node = self.container()
            if self.arguments and self.name.rsplit(":", 1)[-1] in ("tab", "group-tab", "tab-item", "card", "dropdown"):
                node += self.inline_para(self.arguments[0])
            return [self.body(node)]

    class Glossary(Base):
        """`.. glossary::` as Sphinx reads it: entries of one or more term lines, each followed by
        its indented definition (several names may share one definition, which a definition
        list does not allow: "DBAPI" and "pep-249" over one definition read as a paragraph)."""

        def run(self) -> list[Any]:
            outer = self.container()
            content, at = self.content, 0
            while at < len(content):
                line = content[at]
                if not line.strip() or OPTION_LINE.match(line.strip()):
                    at += 1
                    continue
                indent = len(line) - len(line.lstrip())
                terms, first = [], at
                while at < len(content) and content[at].strip() and len(content[at]) - len(content[at].lstrip()) == indent:
                    # "term : index key" (Sphinx's glossary syntax) names the term before the colon
                    terms.append(content[at].strip().split(" : ", 1)[0].strip())
                    at += 1
                start = at
                while at < len(content) and (not content[at].strip() or len(content[at]) - len(content[at].lstrip()) > indent):
                    at += 1
                entry = nodes.container(content[first].strip())  # its line is found by its first term
                entry.line = self.content_offset + first + 1
                entry["wikimem_terms"] = [t for t in terms if t]
                block = content[start:at]
                filled = [len(text) - len(text.lstrip()) for text in block if text.strip()]
                if filled:
                    block.trim_left(min(filled))
                    self.state.nested_parse(block, self.content_offset + start, entry)
                outer += entry
            return [outer]

    class Changelog(Base):
        """`.. changelog::` (the changelog extension): one release, `:version:` and `:released:`,
        its changes inside. Read as a section headed "2.0.58 (November 16, 2026)", or "2.0.59
        (unreleased)" without a release date, that knows its version."""

        def run(self) -> list[Any]:
            version = " ".join(str(self.options.get("version") or "").split())
            if not version:
                return [self.body(self.container())]
            released = " ".join(str(self.options.get("released") or "").split())
            heading = f"{version} ({released})" if released else f"{version} (unreleased)"
            node = self.container(wikimem_release=heading, wikimem_release_version=version)
            if released:
                # the section is cited at the line that dates the release: what "when was it
                # released" asks for, two lines below the version it names
                node.line = self.option_line("released")
            return [self.body(node)]

    class Change(Base):
        """`.. change::`: one change of a release, an item of its section. Its `:tags:` (the
        extension shows "[bug] [orm]" before the text) are left out of the text: they are no
        part of the sentence, whose subject comes first ("Alembic now supports Python 3.8")."""

        def run(self) -> list[Any]:
            node = self.container(wikimem_change="")
            self.state.document["wikimem_changes"] = self.state.document.get("wikimem_changes", 0) + 1
            return [self.body(node)]

    class Only(Base):
        """`.. only:: <expression>`: its content is in the documentation people read (Sphinx's HTML
        output) when the expression holds for HTML's tags; `.. only:: latex` is the PDF's alone."""

        required_arguments = 1

        def run(self) -> list[Any]:
            if not shown_in_html(" ".join(self.arguments)):
                return []
            return [self.body(self.container())]

    class Unknown(Base):
        """A directive nobody registered: its text survives, its markup does not."""

        def run(self) -> list[Any]:
            text = "\n".join(self.content)
            if text.strip() and not _prose(text):
                return Code.run(self)
            node = self.container()
            if self.arguments and not self.content:
                node += self.inline_para(self.arguments[0])
            return [self.body(node)]

    table: dict[str, type] = {"*": Unknown, "include": Include, "toctree": Toctree, "index": Index,
                              "class": ClassDirective, "only": Only, "changelog": Changelog, "change": Change}
    for name in CODE_DIRECTIVES:
        table[name] = Code
    for name in SILENT_DIRECTIVES:
        table[name] = Silent
    for name in VERSION_LABELS:
        table[name] = Version
    for name in ("seealso", "todo"):
        table[name] = Admonition
    for name in API_DIRECTIVES:
        table.setdefault(name, Api)
    for name in CONTAINER_DIRECTIVES:
        table[name] = Container
    table["glossary"] = Glossary  # entries of several names over one definition (Glossary)
    return table


def _inside_api(node: Any) -> bool:
    """Whether an API description sits in another's content (`.. method::` in `.. class::`)."""
    parent = node.parent
    while parent is not None:
        if parent.get("wikimem_api") if hasattr(parent, "get") else False:
            return True
        parent = parent.parent
    return False


# the tags Sphinx's HTML builder sets: its format, its name, and both with their prefixes
HTML_TAGS = frozenset({"html", "format_html", "builder_html"})
_TAG_TOKEN = lazy(r"\(|\)|[^\s()]+")


def shown_in_html(expression: str) -> bool:
    """Whether `.. only:: expression` shows its content in HTML: tags joined by `and`, `or`,
    `not` and parentheses, true for the HTML builder's tags and false for any other (Sphinx's
    rule); an expression that does not parse shows it (nothing is lost)."""
    tokens = _TAG_TOKEN.findall(expression)
    at = 0

    def either() -> bool:
        nonlocal at
        value = both()
        while at < len(tokens) and tokens[at] == "or":
            at += 1
            value = both() or value
        return value

    def both() -> bool:
        nonlocal at
        value = negated()
        while at < len(tokens) and tokens[at] == "and":
            at += 1
            value = negated() and value
        return value

    def negated() -> bool:
        nonlocal at
        if at >= len(tokens):
            raise ValueError("an operand is missing")
        token = tokens[at]
        at += 1
        if token == "not":
            return not negated()
        if token == "(":
            value = either()
            if at >= len(tokens) or tokens[at] != ")":
                raise ValueError("a parenthesis is not closed")
            at += 1
            return value
        if token in (")", "and", "or"):
            raise ValueError(f"unexpected {token!r}")
        return token in HTML_TAGS

    try:
        value = either()
    except ValueError:
        return True
    return value if at == len(tokens) else True


# Sphinx's info fields, as its pages show them: ":param int backlog:" is "`backlog` (int)",
# ":raises ValueError:" is "Raises `ValueError`"
_INFO_PARAM = lazy(r"^(?:param|parameter|arg|argument|key|keyword|kwarg|kwparam|var|ivar|cvar)\s+"
                   r"(?:(?P<type>.+?)\s+)?(?P<name>\**[A-Za-z_]\w*)$")
_INFO_RAISES = lazy(r"^(?:raises|raise|except|exception)\s+(?P<name>[\w.]+)$")
_INFO_LABELS = {"returns": "Returns", "return": "Returns", "rtype": "Return type", "raises": "Raises", "yields": "Yields",
                "ytype": "Yield type"}


def _info_field(name: str) -> str:
    """A field's name as the page shows it: a Sphinx info field as its rendered label (see
    _INFO_PARAM), any other field as written."""
    param = _INFO_PARAM.match(name)
    if param:
        return f"`{param.group('name')}` ({param.group('type')})" if param.group("type") else f"`{param.group('name')}`"
    raises = _INFO_RAISES.match(name)
    if raises:
        return f"Raises `{raises.group('name')}`"
    return _INFO_LABELS.get(name.lower(), name)


_CONTINUED = lazy(r"\\[ \t]*\n")
# a keyword parameter with its default inside a signature's parentheses: "(app, *, port=None)"
_KEYWORD_DEFAULT = lazy(r"\([^()]*\b[A-Za-z_]\w*\s*=\s*[^,)\s]")


def _api_name(signature: str) -> str | None:
    """The name an API description defines: `Client(base_url, ...)` -> "Client"."""
    signature = signature.strip()
    if not signature:
        return None
    match = _SIGNATURE_NAME.match(signature)
    name = match.group(1) if match else signature.split()[0]
    return name.strip(":").rstrip(",") or None  # `-a, --write-all`: its first form


_CODE_MARKS = lazy(r"[{};]|:=|=>|->|\w\(|^[ \t]*(?:#|//|\$ |>>>)", re.MULTILINE)


def _prose(text: str) -> bool:
    words = text.split()
    return len(words) >= 3 and len(_CODE_MARKS.findall(text)) <= max(1, len(words) // 25)


# --- the doctree, read as blocks ---------------------------------------------------------------

_DOCINFO = frozenset("author authors organization address contact version revision status date copyright "
                     "dedication abstract maintainer web site".split())


class _Reader:
    def __init__(self, lines: list[str], offset: int):
        self.lines = lines
        self.offset = offset
        self.blocks: list[Block] = []
        self.meta: dict[str, str] = {}
        self.title: str | None = None
        self.title_from: str | None = None  # the file an include before the first title brings in
        self.first_of_several = False  # the title is the first of the document's sections, not its own
        self.seen_body = False
        self.labels: list[tuple[str, int, str | None]] = []  # `.. _label:`: (name, line, title it shows)
        self.pending_labels: list[tuple[str, int]] = []  # labels waiting for what they name
        self.expanding: set[int] = set()  # the substitutions being read into the text

    # lines --------------------------------------------------------------------------------
    def line_of(self, node: Any, fallback: int = 0) -> int:
        """The 1-based line of a node in the whole file, checked against the text: docutils
        gives a section title the line of its underline, and some nodes no line at all."""
        line = getattr(node, "line", None)
        if not line:
            parent = node.parent
            while parent is not None and not getattr(parent, "line", None):
                parent = parent.parent
            line = getattr(parent, "line", None) or fallback
        if not line:
            return self.offset + 1
        raw = (getattr(node, "rawsource", "") or node.astext()).strip().split("\n")[0].strip()
        probe = raw[:30]
        if probe:
            for candidate in (line, line - 1, line - 2, line + 1, line - 3):
                if 1 <= candidate <= len(self.lines) and self.lines[candidate - 1].strip().startswith(probe):
                    return candidate + self.offset
        return min(line, max(1, len(self.lines))) + self.offset

    def written_at(self, text: str, near: int | None) -> int:
        """The 1-based line where `text` (lines docutils quotes from the source) starts, at or
        before line `near`: a table starts above the line its error names."""
        want = [line.strip() for line in text.split("\n")]
        near = min(near or 1, len(self.lines))
        for start in range(near, max(0, near - 400), -1):
            if [line.strip() for line in self.lines[start - 1: start - 1 + len(want)]] == want:
                return start + self.offset
        return near + self.offset

    # reading --------------------------------------------------------------------------------
    def read(self, document: Any) -> None:
        from docutils import nodes

        # what may come before a document's title: comments, targets, substitutions, metadata,
        # decoration, the note an include leaves, and a directive that shows nothing (Sphinx's
        # `.. module:: jinja2.nativetypes` above "Native Python Types")
        top = [c for c in document.children
               if not isinstance(c, (nodes.PreBibliographic, nodes.target, nodes.pending, nodes.decoration,
                                     nodes.raw, nodes.Invisible))
               and c.tagname != "meta" and not c.get("wikimem_include")
               and not (isinstance(c, nodes.container) and not c.children)]
        # a field list first in the document is the file's metadata, as Sphinx reads it
        # (`:orphan:`, `:tocdepth: 3`, `:nosearch:`, an author and a date): neither text nor the
        # end of what may come before the title
        if top and isinstance(top[0], nodes.field_list):
            self.file_fields(top[0])
            top = top[1:]
        sections = [c for c in top if isinstance(c, nodes.section)]
        # a lone top-level section that opens the document is its title (docutils' doctitle
        # rule); otherwise the first section's title is, wherever it is (Sphinx's title
        # collector): after a sidebar, a banner, an introduction, or first of several
        lone = len(sections) == 1 and top and top[0] is sections[0]
        first = sections[0] if lone else next(document.findall(nodes.section), None)
        if first is not None and first.children and isinstance(first[0], nodes.title):
            self.title = xref.plain(self.inline(first[0], dashes=True))
            self.first_of_several = not lone
        # a file included before any title of the document's own: Sphinx shows that file's
        # title, if it has one (the backend knows every file's; parsing reads no other file)
        for child in document.children:
            if isinstance(child, nodes.section):
                break
            if child.get("wikimem_include"):
                self.title_from = child["wikimem_include"] if child.get("wikimem_from_top") else None
                break
        if document.get("title"):
            self.title = str(document["title"])  # `.. title::`: the author named the document
            self.first_of_several = False
            self.title_from = None
        self.children(document, 1, None, None, None)
        for name, line in self.pending_labels:  # labels nothing follows: they name their own place
            self.labels.append((name, line, None))
        self.pending_labels.clear()

    def file_fields(self, node: Any) -> None:
        """The file-wide metadata of a field list that opens a document: every field, its name
        lowercased; the list is not read as text."""
        node["wikimem_meta"] = True
        for item in node.children:
            if not item.children:
                continue
            name = " ".join(item[0].astext().split()).lower()
            value = " ".join(xref.plain(item[1].astext()).split()) if len(item.children) > 1 else ""
            if name:
                self.meta[name] = value

    def children(self, node: Any, depth: int, subject: str | None, version: str | None, label: str | None) -> None:
        for child in node.children:
            self.node(child, depth, subject, version, label)
            label = None  # a label ("Note:") prefixes the first paragraph only

    def node(self, node: Any, depth: int, subject: str | None, version: str | None, label: str | None) -> None:
        from docutils import nodes

        if isinstance(node, nodes.target):
            # `.. _label:`: a name for what follows it (a section, a figure, a paragraph), which
            # `:ref:` may show and link from anywhere in the set
            if node.get("names") and not node.children and not (node.get("refuri") or node.get("refname")
                                                                 or node.get("refid")):
                line = self.line_of(node)
                self.pending_labels.extend((name, line) for name in node["names"])
            return
        if isinstance(node, nodes.system_message):
            # a table docutils could not read (ragged columns): its text as written, never lost
            # (the page's note says what was wrong); what other errors quote (a directive
            # refused, raw output) stays out
            if not node.children or not node[0].astext().startswith("Malformed table"):
                return
            for block in node.findall(nodes.literal_block):
                if block.astext().strip():
                    self.blocks.append(Block("code", block.astext(), self.written_at(block.astext(), node.get("line"))))
            return
        if isinstance(node, nodes.substitution_definition):
            # what another file that includes this one shows for it: a label only a substitution
            # reference can name (sources/xref.py)
            if node.get("names") and not _is_badge(node) and id(node) not in self.expanding:
                text = self.expand(node)
                if text and xref.OPEN not in text:
                    self.labels.append((xref.substitution(node["names"][0]), self.line_of(node), text))
            return
        if isinstance(node, (nodes.comment, nodes.substitution_definition,
                             nodes.pending, nodes.raw, nodes.meta if hasattr(nodes, "meta") else nodes.pending,
                             nodes.transition, nodes.image, nodes.decoration, nodes.label)):
            return
        if isinstance(node, nodes.Text):
            return
        if isinstance(node, nodes.section):
            title = self.inline(node[0], dashes=True) if node.children and isinstance(node[0], nodes.title) else ""
            if title:
                at = self.line_of(node[0])
                self.labelled(xref.plain(title), at)
                self.add("heading", title, at, level=depth)
            for child in node.children[1:]:
                self.node(child, depth + 1, None, version, None)
            return
        if self.pending_labels and isinstance(node, (nodes.figure, nodes.table)):
            # a figure's caption, a table's title: what `:ref:` shows for their labels
            named = node.next_node(nodes.caption if isinstance(node, nodes.figure) else nodes.title)
            if named is not None:
                self.labelled(xref.plain(self.inline(named)), self.line_of(named))
        if isinstance(node, nodes.docinfo) or node.get("wikimem_meta") or (
                isinstance(node, nodes.field_list) and not self.seen_body and self.docinfo(node)):
            return
        if isinstance(node, nodes.paragraph):
            text = self.inline(node)
            if label:
                text = f"{label}: {text}" if not text.startswith(label) else text
            self.add("para", text, self.line_of(node), subject=subject, version=version)
            return
        if isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
            for item in node.children:
                release = _release_item(item)
                if release is not None:
                    # an item that only names a release opens it: the items after it are its changes
                    self.add("heading", release.astext(), self.line_of(item), level=depth,
                             version=release["wikimem_release"])
                    continue
                self.list_item(item, depth, subject, version)
            return
        if isinstance(node, nodes.definition_list):
            for item in node.children:
                self.definition(item, depth, version)
            return
        if isinstance(node, nodes.field_list):
            for item in node.children:
                self.field(item, depth, subject, version)
            return
        if isinstance(node, nodes.option_list):
            for item in node.children:
                options = ", ".join(code_span(o.astext()) for o in item.findall(nodes.option_string))
                description = item.next_node(nodes.description)
                text = self.inline_blocks(description) if description is not None else ""
                self.add("item", f"{options}: {text}" if text else options, self.line_of(item),
                         subject=subject, version=version)
            return
        if isinstance(node, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
            text = node.astext()
            if text.strip():
                self.blocks.append(Block("code", text, self.line_of(node)))
            return
        if isinstance(node, nodes.line_block):
            text = "\n".join(self.inline(line) for line in node.findall(nodes.line))
            self.add("para", text, self.line_of(node), subject=subject, version=version)
            return
        if isinstance(node, nodes.table):
            self.table(node, subject, version)
            return
        if isinstance(node, nodes.Admonition):
            name = node.tagname
            name_text: str | None
            if isinstance(node, nodes.admonition):
                title = node.next_node(nodes.title)
                name_text = self.inline(title) if title is not None else "Note"
            else:
                name_text = ADMONITION_LABELS.get(name, name.title())
            for child in node.children:
                if isinstance(child, nodes.title):
                    continue
                self.node(child, depth, subject, version, name_text)
                name_text = None
            return
        if isinstance(node, (nodes.title, nodes.rubric, nodes.subtitle, nodes.caption, nodes.attribution)):
            text = self.inline(node)
            if isinstance(node, nodes.attribution):
                text = f"— {text}"
            self.add("para", text, self.line_of(node), subject=subject, version=version)
            return
        if isinstance(node, (nodes.topic, nodes.sidebar)):
            if "contents" in node.get("classes", []) or node.next_node(nodes.pending) is not None:
                return  # `.. contents::`: a table of contents docutils would generate
            # an aside: its paragraphs are labelled so they are never taken for the document's lead
            title = node.next_node(nodes.title)
            aside = "Sidebar" if isinstance(node, nodes.sidebar) else "Topic"
            heading = self.inline(title) if title is not None else ""
            label = aside + (f" ({heading})" if heading else "")
            for child in node.children:
                if not isinstance(child, nodes.title):
                    self.node(child, depth, subject, version, label)
                    label = None
            return
        if isinstance(node, nodes.container) and node.get("wikimem_release"):
            # a release the markup declares: a section of its own, one level in
            self.add("heading", node["wikimem_release"], self.line_of(node), level=depth,
                     version=node["wikimem_release_version"])
            self.children(node, depth + 1, subject, version, None)
            return
        if isinstance(node, nodes.container) and node.get("wikimem_change") is not None:
            first = True
            for child in node.children:
                if first and isinstance(child, nodes.paragraph):
                    self.add("item", self.inline(child), self.line_of(child), subject=subject, version=version)
                    first = False
                else:
                    self.node(child, depth, subject, version, None)
            return
        if isinstance(node, nodes.container):
            terms = node.get("wikimem_terms")
            if terms:
                # a description inside another's (a method's in its class's): a member, level 1
                member = node.get("wikimem_api") and _inside_api(node)
                for term in terms:
                    self.add("term", term, self.line_of(node), level=1 if member else 0, subject=term)
                subject = terms[0]
            if node.get("wikimem_version"):
                version = node["wikimem_version"]
                label = f"{node['wikimem_label']} {version}"
                if not any(isinstance(c, (nodes.paragraph, nodes.Element)) for c in node.children):
                    self.add("para", f"{label}.", self.line_of(node), subject=subject, version=version)
                    return
            elif node.get("wikimem_label"):
                label = node["wikimem_label"]
            self.children(node, depth, subject, version, label)
            return
        if isinstance(node, nodes.Element):
            self.children(node, depth, subject, version, label)

    def list_item(self, item: Any, depth: int, subject: str | None, version: str | None) -> None:
        from docutils import nodes

        first = True
        for child in item.children:
            if first and isinstance(child, nodes.paragraph):
                self.add("item", self.inline(child), self.line_of(child), subject=subject, version=version)
            else:
                self.node(child, depth, subject, version, None)
            first = False

    def definition(self, item: Any, depth: int, version: str | None) -> None:
        from docutils import nodes

        term_node = item.next_node(nodes.term)
        term = self.inline(term_node) if term_node is not None else ""
        if term:
            self.add("term", term, self.line_of(term_node), subject=term)
        for child in item.children:
            if isinstance(child, nodes.definition):
                self.children(child, depth, term or None, version, None)

    def hanging(self, dl: Any, field: Any) -> bool:
        """Whether a definition list opening a field's body is the field's first line read as a
        term: the term starts on the field's own line (":param x: Size of the read buffer" with
        the lines after it indented deeper than a note that follows), which no author writes as
        a term of a list."""
        from docutils import nodes

        term = dl[0].next_node(nodes.term) if dl.children else None
        return term is not None and self.line_of(term) == self.line_of(field)

    def field(self, item: Any, depth: int, subject: str | None, version: str | None) -> None:
        from docutils import nodes

        name = _info_field(item[0].astext().strip()) if item.children else ""
        body = item[1] if len(item.children) > 1 else None
        first = True
        if body is not None:
            for child in body.children:
                if first and isinstance(child, nodes.paragraph):
                    self.add("item", f"{name}: {self.inline(child)}", self.line_of(item), subject=subject,
                             version=version)
                    first = False
                elif first and isinstance(child, nodes.definition_list) and self.hanging(child, item):
                    # the body's first line, and the lines under it indented deeper than what
                    # follows (a note at the field's own indent): docutils reads a term and its
                    # definition, the author wrote one paragraph
                    opening, *rest = child.children
                    definition = opening.next_node(nodes.definition)
                    parts = list(definition.children) if definition is not None else []
                    joined = self.inline(opening.next_node(nodes.term))
                    if parts and isinstance(parts[0], nodes.paragraph):
                        joined += " " + self.inline(parts.pop(0))
                    self.add("item", f"{name}: {joined}", self.line_of(item), subject=subject, version=version)
                    first = False
                    for part in parts:
                        self.node(part, depth, subject, version, None)
                    for other in rest:
                        self.definition(other, depth, version)
                else:
                    self.node(child, depth, subject, version, None)
        if first and name:
            self.add("item", name, self.line_of(item), subject=subject, version=version)

    def docinfo(self, node: Any) -> bool:
        """The bibliographic fields before the body (:Author:, :Date:, ...) are metadata."""
        fields = {}
        for item in node.children:
            if len(item.children) < 2:
                return False
            fields[item[0].astext().strip().lower()] = xref.plain(item[1].astext()).strip()
        if not fields or not all(name in _DOCINFO for name in fields):
            return False
        self.meta.update(fields)
        if "abstract" in fields:
            self.add("para", fields["abstract"], self.line_of(node))
        return True

    def table(self, node: Any, subject: str | None, version: str | None) -> None:
        from docutils import nodes

        start = len(self.blocks)
        for row in node.findall(nodes.row):
            cells = [" ".join(self.inline_blocks(entry).split()) for entry in row.children]
            if any(cells):
                first = row.next_node(nodes.paragraph)
                line = self.line_of(first) if first is not None else self.line_of(node)
                self.add("table", " | ".join(cells), line, subject=subject, version=version)
        counted(self.blocks, start)

    def labelled(self, title: str | None, line: int) -> None:
        """The labels waiting for what follows them name what is at `line`, titled `title` (a
        section's, a caption; None for a paragraph, which `:ref:` cannot show without a text)."""
        for name, _at in self.pending_labels:
            self.labels.append((name, line, title))
        self.pending_labels.clear()

    def add(self, kind: str, text: str, line: int, *, level: int = 0, subject: str | None = None,
            version: str | None = None) -> None:
        text = text.strip()
        if not text:
            return
        if kind in ("heading", "term"):
            text = xref.plain(text)  # a heading or a term is a name: the text it shows alone
        if self.pending_labels:
            self.labelled(None, line)
        if kind != "heading":
            self.seen_body = True
        self.blocks.append(Block(kind, text, line, level, subject=subject, version=version))

    # inline text ------------------------------------------------------------------------------
    def inline_blocks(self, node: Any) -> str:
        """The text of a node that may hold several paragraphs (a table cell, a description)."""
        from docutils import nodes

        parts = [self.inline(p) for p in node.findall(nodes.TextElement) if not isinstance(p.parent, nodes.TextElement)]
        return " ".join(p for p in parts if p)

    def expand(self, definition: Any) -> str:
        """A substitution's definition read as text (one that refers to itself is its name)."""
        self.expanding.add(id(definition))
        try:
            return self.inline(definition)
        finally:
            self.expanding.discard(id(definition))

    def inline(self, node: Any, dashes: bool = False) -> str:
        """The node's text as Markdown. `dashes`: a title's `---` and `--` outside code are the
        em and en dashes Sphinx shows (its smart quotes, on by default, set them)."""
        from docutils import nodes

        out: list[str] = []
        for child in node.children:
            if isinstance(child, nodes.Text):
                out.append(_DASHES.sub(_dash, child.astext()) if dashes and "--" in child else child.astext())
            elif isinstance(child, (nodes.literal, nodes.math)):
                out.append(code_span(child.astext()))
            elif isinstance(child, nodes.emphasis):
                inner = self.inline(child)
                out.append(f"*{inner}*" if inner else "")
            elif isinstance(child, nodes.strong):
                inner = self.inline(child)
                out.append(f"**{inner}**" if inner else "")
            elif isinstance(child, nodes.reference):
                text = self.inline(child) or child.astext()
                uri = child.get("refuri", "")
                out.append(f"[{text}]({uri})" if uri and ABSOLUTE_URL.match(uri) and text != uri else text)
            elif isinstance(child, (nodes.footnote_reference, nodes.citation_reference, nodes.system_message,
                                    nodes.raw, nodes.comment)):
                continue
            elif isinstance(child, nodes.image):
                out.append(child.get("alt", ""))
            elif isinstance(child, nodes.substitution_reference):
                definition = _substitution(child)
                if definition is None:
                    # defined in another file (one the document includes): a mark the offline
                    # backend resolves against every file's definitions, else its name (Sphinx's
                    # |version|, from conf.py)
                    out.append(xref.mark("ref", xref.substitution(child.get("refname", "") or child.astext())))
                elif id(definition) in self.expanding:
                    out.append(self.inline(child))
                elif not _is_badge(definition):  # |PyPI| |CI| ...: a README's badges say nothing
                    out.append(self.expand(definition))
            elif isinstance(child, nodes.problematic):
                out.append(_strip_markup(child.astext()))
            elif isinstance(child, nodes.Element):
                out.append(self.inline(child, dashes))
        text = "".join(out).strip()
        if isinstance(node, nodes.TextElement) and not isinstance(node, nodes.Inline) and "\n" in node.rawsource:
            text = keep_lines(node.rawsource, text)  # a sentence is cited at its own line
        return text


# Sphinx's dashes: `---` an em dash and `--` an en dash, between spaces or words alike
# ("DiGraph---Directed graphs", "pages 3--5"); an option's `--name` written outside code stays
# as written
_DASHES = lazy(r"(?<!-)(-{2,3})(?!-)")


def _dash(m: re.Match[str]) -> str:
    if len(m.group(1)) == 3:
        return "\u2014"
    text, at, end = m.string, m.start(), m.end()
    if (at == 0 or not text[at - 1].isalnum()) and end < len(text) and text[end].isalpha():
        return m.group(1)  # `--name`: an option
    return "\u2013"


def _release_item(item: Any) -> Any:
    """The release an item of a list names and nothing else (`- :release:`3.0.3 <2026-04-07>``), or None."""
    from docutils import nodes

    if len(item.children) != 1 or not isinstance(item[0], nodes.paragraph):
        return None
    parts = [c for c in item[0].children if not (isinstance(c, nodes.Text) and not c.astext().strip())]
    if len(parts) == 1 and isinstance(parts[0], nodes.inline) and parts[0].get("wikimem_release"):
        return parts[0]
    return None


def _substitution(reference: Any) -> Any:
    """The definition a substitution reference stands for (`.. |name| replace:: ...`), if the
    document holds it."""
    from docutils import nodes

    document = reference.document
    if document is None:
        return None
    name = document.substitution_names.get(nodes.fully_normalize_name(reference.get("refname", "")))
    return document.substitution_defs.get(name) if name else None


def _is_badge(definition: Any) -> bool:
    """A substitution that stands for an image alone (`.. |CI| image:: ...badge.svg`)."""
    from docutils import nodes

    return any(definition.findall(nodes.image)) and not any(t.astext().strip() for t in definition.findall(nodes.Text))


def _strip_markup(text: str) -> str:
    """What is left of inline markup docutils could not read: its words."""
    text = re.sub(r":[\w:+-]+:(?=`)", "", text)
    return text.strip("`*_|")
