"""The markdown of an explanation: the facts, each with its citation (or the LLM's
prose), with citations and symbol names linked as the caller wants."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..answer.citations import cite
from ..answer.prompt import fence_for
from ..picture.mermaid import neighbourhood_mermaid
from .limits import MAX_EDGES
from .scan import norm

if TYPE_CHECKING:
    from ..picture.model import Neighbourhood
    from .model import Cited, Exit, Explanation

#: Writes a citation (path, first line, last line) as markdown: ``cite`` by default.
CitationLink = Callable[[str, int, int], str]
#: A link to another symbol's documentation (path, qualname), or None.
SymbolLink = Callable[[str, str], str | None]


def code_span(text: str) -> str:
    """``text`` as inline code on one line, whatever backticks it holds."""
    flat = norm(text)
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _prose(text: str) -> str:
    """Repository prose (a doc comment) on one line, its HTML tags shown as text and a
    leading list or heading marker (``1.``, ``-``, ``#``) escaped."""
    flat = norm(text).replace("<", "&lt;")
    return re.sub(r"^(\d+)([.)])|^([-*+#>])", lambda m: f"{m[1] or ''}\\{m[2] or m[3]}", flat)


def _fenced(code: str, language: str, indent: str = "") -> list[str]:
    fence = fence_for(code)
    info = {"c_sharp": "csharp", "config": "", "text": ""}.get(language, language)
    info = re.sub(r"[^A-Za-z0-9_+-]", "", info)
    return [f"{indent}{fence}{info}", *(f"{indent}{ln}" for ln in code.split("\n")), indent + fence]


_NO_CALLERS = (
    "No callers in the index: it may be an entry point, called by a framework or by name, "
    "or unused."
)
_NO_TESTS = "No test in the index exercises it directly (`codecite search` may find others)."
_NO_CALLS = "Calls no other code of this repository (calls into libraries are not tracked)."
_NO_READERS = "No other code of the index writes its name: it may be read by name or unused."


def _when(e: Exit) -> str:
    cond = e.condition
    return {
        "if": f" when {code_span(cond)}" if cond else " under a condition",
        "else": " otherwise (in an `else` branch)",
        "catch": f" when {code_span(cond)} is caught" if cond else " in a `catch` block",
        "case": f" in the {code_span('case ' + cond)} branch",
        "declared": " (declared with `throws` in the signature)",
        "documented": " (its doc comment says so; not found in the code)",
    }.get(e.guard, "")


class _Page:
    """Markdown lines, with citations (``link``) and symbol names (``symbol_link``)
    written as the caller wants them."""

    def __init__(
        self,
        link: CitationLink | None,
        symbol_link: SymbolLink | None,
    ) -> None:
        self.lines: list[str] = []
        self.link, self.symbol_link = link or cite, symbol_link

    def cites(self, *items: Cited | None) -> str:
        return "; ".join(self.link(x.path, x.start_line, x.end_line) for x in items if x)

    def name(self, path: str, qualname: str) -> str:
        target = self.symbol_link(path, qualname) if self.symbol_link else None
        return f"[{code_span(qualname)}]({target})" if target else code_span(qualname)

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def section(self, title: str, rows: list[str], empty: str) -> None:
        self.add(title, "", *(rows or [empty]), "")


def render(
    expl: Explanation,
    *,
    level: int = 2,
    link: CitationLink | None = None,
    symbol_link: SymbolLink | None = None,
    diagram: bool = True,
) -> str:
    """The markdown of an explanation; with ``diagram``, its neighbourhood last, as a
    Mermaid diagram (callers and tests on the left, callees and bases on the right)."""
    page = _Page(link, symbol_link)
    s, sub = expl.symbol, "#" * (level + 1) + " "
    owner = f" of {page.name(s.path, s.parent)}" if s.parent else ""
    page.add(f"{'#' * level} {code_span(s.qualname)}", "")
    if not expl.prose:
        page.add(f"{_prose(expl.summary.text)} ({page.cites(expl.summary)})", "")
        if expl.details:
            page.add(f"{_prose(expl.details.text)} ({page.cites(expl.details)})", "")
    whole = page.cites(*expl.defined) or page.link(s.path, s.start_line, expl.end_line)
    page.add(f"{s.kind.capitalize()}{owner} ({s.language}), defined at {whole}.", "")
    if expl.signature:
        label = "Value" if s.kind == "constant" else "Signature"
        page.add(f"{label} ({page.cites(expl.signature)}):", "")
        page.add(*_fenced(expl.signature.code, s.language), "")
    if expl.prose:
        page.add(expl.prose.strip(), "")
    else:
        _facts(expl, page, sub)
    if diagram and expl.neighbourhood and len(expl.neighbourhood.nodes) > 1:
        page.add(f"{sub}Neighbourhood", "", *_diagram(expl.neighbourhood), "")
    page.add(*(f"> **Warning:** {_prose(flag)}" for flag in expl.flags))
    return "\n".join(page.lines).rstrip() + "\n"


def _diagram(hood: Neighbourhood) -> list[str]:
    """The neighbourhood as a fenced Mermaid diagram, and what was left out of it."""
    text = neighbourhood_mermaid(hood).rstrip("\n")
    fence = fence_for(text)
    left = ", ".join(f"{n} {role}{'s' if n > 1 else ''}" for role, n in hood.left_out)
    more = ["", f"Not drawn, to keep it small: {left}."] if left else []
    return [f"{fence}mermaid", text, fence, *more]


def _facts(expl: Explanation, page: _Page, sub: str) -> None:
    if expl.symbol.kind == "constant":  # no parameters, exits, calls: who reads it
        page.section(f"{sub}Read by", _usage_rows(expl, page), _NO_READERS)
        return
    if expl.symbol.kind == "class":
        if expl.params:
            page.section(f"{sub}Constructor parameters", _param_rows(expl, page), "")
        rows = [
            f"- {page.name(m.where.path, m.qualname)}{_dash(m.summary)} ({page.cites(m.where)})"
            for m in expl.members
        ]
        page.section(f"{sub}Members", rows, "No methods found in the index.")
    else:
        if expl.signature or expl.params:
            empty = f"Takes no parameters ({page.cites(expl.signature)})."
            page.section(f"{sub}Parameters", _param_rows(expl, page), empty)
        if expl.returns:
            r = expl.returns
            what = code_span(r.type) if r.type else "A value"
            desc = f": {_prose(r.description)}" if r.description else ""
            page.section(f"{sub}Returns", [f"{what}{desc} ({page.cites(r.where, r.doc)})"], "")
        empty = "No `raise`/`throw` and no early `return` found in its code."
        page.section(f"{sub}Raises and returns early", _exit_rows(expl, page), empty)
    rows = []
    for link in expl.calls:
        at = f", called at {page.cites(*link.at)}" if link.at else ""
        rows.append(
            f"- {page.name(link.where.path, link.qualname)} ({link.kind}){_dash(link.summary)} "
            f"({page.cites(link.where)}){at}"
        )
    page.section(f"{sub}Calls", rows, _NO_CALLS)
    page.section(f"{sub}Usage examples", _usage_rows(expl, page), _NO_CALLERS)
    rows = []
    for t in expl.tests:
        verb = "asserts:" if t.asserts else "calls it (no asserting line found)."
        rows.append(f"- {page.name(t.where.path, t.name)} ({page.cites(t.where)}) {verb}")
        rows += [f"  - {code_span(a.code)} ({page.cites(a)})" for a in t.asserts]
    if expl.tests_total > len(expl.tests):
        rows.append(f"- and {expl.tests_total - len(expl.tests)} more")
    page.section(f"{sub}Tests", rows, _NO_TESTS)


def _dash(text: str) -> str:
    return f" — {_prose(text)}" if text else ""


def _param_rows(expl: Explanation, page: _Page) -> list[str]:
    rows = []
    for p in expl.params:
        default = f"default {code_span(p.default)}" if p.default else ""
        detail = ", ".join(x for x in (code_span(p.type) if p.type else "", default) if x)
        desc = f": {_prose(p.description)}" if p.description else ""
        shown = f" ({detail})" if detail else ""
        rows.append(f"- {code_span(p.name)}{shown}{desc} ({page.cites(p.where, p.doc)})")
    return rows


def _exit_rows(expl: Explanation, page: _Page) -> list[str]:
    rows = []
    for e in expl.raises:
        head = f"Raises {code_span(e.what)}" if e.what else "Re-raises the exception it handles"
        seen = e.guard not in ("declared", "documented")
        quoted = f": {code_span(e.statement)}" if seen and e.statement else ""
        rows.append(
            f"- {head}{_when(e)}{quoted}{_dash(e.description)} ({page.cites(e.where, e.doc)})"
        )
    for e in expl.early_returns:
        value = code_span(e.what) if e.what else "nothing"
        rows.append(f"- Returns {value} early{_when(e)} ({page.cites(e.where)})")
    return rows


def _usage_rows(expl: Explanation, page: _Page) -> list[str]:
    total = expl.callers_total
    if not total:
        return []
    tests = sum(u.is_test for u in expl.callers)
    only = (
        " (only from tests)"
        if tests == len(expl.callers)
        else (f" ({tests} of them tests)" if tests else "")
    )
    least = "at least " if total >= MAX_EDGES else ""
    verb, also = ("Read in", "Also read in") if expl.symbol.kind == "constant" else (
        "Called from", "Also called by")  # fmt: skip
    rows = [f"{verb} {least}{total} place{'s' if total > 1 else ''}{only}.", ""]
    for u in expl.usages:
        assert u.call is not None
        test = " (a test)" if u.is_test else ""
        where = f"({page.cites(u.where)}), at {page.cites(u.call)}"
        rows += [f"- In {page.name(u.where.path, u.caller)}{test} {where}:", ""]
        rows += [*_fenced(u.call.code, expl.symbol.language, "  "), ""]
    rest = [u for u in expl.callers if u not in expl.usages]
    if not rest:
        rows.pop()
    else:
        more = total - len(expl.callers)
        listed = ", ".join(
            f"{page.name(u.where.path, u.caller)} ({page.cites(u.where)})" for u in rest
        )
        rows.append(f"{also} {listed}{f' and {more} more' if more > 0 else ''}.")
    return rows
