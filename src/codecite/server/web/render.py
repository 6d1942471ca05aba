"""HTML pieces of the web page: answers (Markdown by markdown-it-py, raw HTML off, every
``path:start-end`` made a link to the code view with its ✓/✗ mark), code (Pygments,
one highlighted line per source line) and the marks of an answer's sources."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound

from ... import parse_citations

#: Pygments style of the code view: its colours keep a WCAG AA contrast (4.5:1) on
#: white and on the highlighted lines' background (checked in tests/test_web.py).
PYGMENTS_STYLE = "xcode"
#: Background of cited lines (also in app.css).
HIGHLIGHT_BACKGROUND = "#fff4c2"
#: Links an answer may carry besides citations: the model's text is not trusted.
LINK_REL = "nofollow noopener noreferrer"

#: What each mark means, in the page's legend, its tooltips and the README.
MARKS = {
    "verified": ("✓", "verified: the cited lines are in the code the answer was built from"),
    "uncited": ("·", "not cited: retrieved as context, but the answer does not cite it"),
    "outside": ("✗", "outside the context: cited, but not in the retrieved code (unverified)"),
    "partial": ("✗", "partly outside the context: only part of the cited range was retrieved"),
}


#: How an answer starts when codecite abstained before asking any model.
ABSTAINED = "Not enough information in the indexed code to answer this"


def abstained(answer: dict[str, Any]) -> bool:
    """Whether codecite found nothing that answers the question and asked no model."""
    return bool(answer.get("insufficient")) and str(answer.get("answer", "")).startswith(ABSTAINED)


def code_url(
    repo: str, path: str, start: int, end: int, *, symbol: str = "", back: str = ""
) -> str:
    """The code view of ``path:start-end`` (a few lines around them: no scrolling
    needed to see the cited lines and what the page says about them)."""
    params: dict[str, str | int] = {"repo": repo, "path": path, "start": start, "end": end}
    if symbol:
        params["symbol"] = symbol
    if back:
        params["back"] = back
    return f"/web/code?{urlencode(params)}"


def share_url(question: str, repos: Sequence[str], page: str = "/") -> str:
    """``/?q=...&repos=...``: the page that asks this again (``page="/web/search"``:
    searches it again)."""
    params = {"q": question}
    if repos:
        params["repos"] = ",".join(repos)
    return f"{page}?{urlencode(params)}"


@dataclass(frozen=True)
class CitationLink:
    """A citation of an answer as the page shows it."""

    path: str
    start: int
    end: int
    status: str  # verified, outside, partial
    url: str

    @property
    def mark(self) -> str:
        return MARKS[self.status][0]

    @property
    def meaning(self) -> str:
        return MARKS[self.status][1]


def citation_status(citation: dict[str, Any]) -> str:
    if citation.get("verified"):
        return "verified"
    return "partial" if citation.get("partial") else "outside"


def _symbol_at(sources: Sequence[dict[str, Any]], path: str, start: int, end: int) -> str:
    """The qualname of the narrowest source chunk holding ``path:start-end``."""
    holding = [
        s
        for s in sources
        if s.get("path") == path and s["start_line"] <= start and end <= s["end_line"]
    ]
    holding.sort(key=lambda s: s["end_line"] - s["start_line"])
    return str(holding[0].get("qualname") or "") if holding else ""


def citation_links(
    answer: dict[str, Any], back: str = ""
) -> dict[tuple[str, int, int], CitationLink]:
    """Each citation as written in the answer's text ((path, start, end) as parsed) →
    its link. ``answer["citations"]`` follows :func:`parse_citations`'s order."""
    repo = str(answer.get("repo", ""))
    out: dict[tuple[str, int, int], CitationLink] = {}
    written = parse_citations(str(answer.get("answer", "")))
    for (path, start, end, _), cited in zip(written, answer.get("citations", []), strict=False):
        full = str(cited["path"])
        if not (full == path or full.endswith("/" + path)) or cited["start_line"] != start:
            continue
        symbol = _symbol_at(answer.get("sources", []), full, start, end)
        url = code_url(repo, full, start, end, symbol=symbol, back=back)
        out[(path, start, end)] = CitationLink(full, start, end, citation_status(cited), url)
    return out


def _link_tokens(link: CitationLink, text: str, code: bool) -> list[Token]:
    """``<a class="cite STATUS" ...><span class="mark">✓</span> text</a>``: the mark
    is our own markup (html_inline), the text stays a text or code token (escaped)."""
    opening = Token("link_open", "a", 1)
    opening.attrs = {
        "href": link.url,
        "class": f"cite {link.status}",
        "title": link.meaning,
        "data-status": link.status,
    }
    mark = Token("html_inline", "", 0)
    mark.content = (
        f'<span class="mark" aria-hidden="true">{link.mark}</span>'
        f'<span class="sr-only">{html.escape(link.status)}: </span>'
    )
    body = Token("code_inline" if code else "text", "code" if code else "", 0)
    body.content = text
    return [opening, mark, body, Token("link_close", "a", -1)]


def _split_text(content: str, links: dict[tuple[str, int, int], CitationLink]) -> list[Token]:
    out: list[Token] = []
    rest = content
    for path, start, end, written in parse_citations(content):
        link = links.get((path, start, end))
        at = rest.find(written)
        if link is None or at < 0:
            continue
        if at:
            out.append(_text(rest[:at]))
        out += _link_tokens(link, written, code=False)
        rest = rest[at + len(written) :]
    if rest:
        out.append(_text(rest))
    return out


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _link_inline(
    children: list[Token], links: dict[tuple[str, int, int], CitationLink]
) -> list[Token]:
    out: list[Token] = []
    depth = 0  # inside a link the model wrote: leave its text alone
    for child in children:
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth -= 1
        if depth == 0 and child.type == "text":
            out += _split_text(child.content, links)
        elif depth == 0 and child.type == "code_inline":
            found = parse_citations(child.content)
            link = links.get(found[0][:3]) if len(found) == 1 else None
            if link is not None and found[0][3] == child.content.strip():
                out += _link_tokens(link, child.content, code=True)
            else:
                out.append(child)
        else:
            if child.type == "link_open":
                child.attrSet("rel", LINK_REL)
            out.append(child)
    return out


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # "commonmark" with raw HTML off: HTML in an answer is shown as text. No images:
    # an answer never makes the browser fetch anything.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    return md


#: What Markdown reads as code: a fenced block, an inline span.
_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[`~]*[ \t]*$|(`+)[^`]*?\2", re.M | re.S)


def _literal_citations(markdown: str) -> str:
    """``markdown`` with the emphasis marks of its citations outside code escaped: a path
    is written as it is (``pkg/__init__.py:1-3``, ``__tests__/app.test.js:9``), not
    read as bold, and stays one citation to link."""

    def escape(text: str) -> str:
        for written in {c[3] for c in parse_citations(text)}:
            text = text.replace(written, re.sub(r"([_*])", r"\\\1", written))
        return text

    out, at = [], 0
    for m in _CODE.finditer(markdown):
        out += [escape(markdown[at : m.start()]), m.group(0)]
        at = m.end()
    return "".join([*out, escape(markdown[at:])])


def answer_html(answer: dict[str, Any], back: str = "", text: str | None = None) -> str:
    """The answer's Markdown (or ``text``, a part of it: its lead) as HTML, its
    citations linked to the code view."""
    md = _markdown()
    links = citation_links(answer, back)
    source = str(answer.get("answer", "")) if text is None else text
    tokens = md.parse(_literal_citations(source))
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _link_inline(token.children, links)
    return str(md.renderer.render(tokens, md.options, {}))


# --- evidence blocks -------------------------------------------------------------------------
#: The confidence levels of an answer (``Answer.confidence``) as the page says them.
CONFIDENCE = {
    "high": "High: the lines shown hold what the question asks about.",
    "medium": "Medium: the lines shown cover part of the question; check them.",
    "low": "Low: related code, but it may not answer the question; read before relying on it.",
    "none": "None: the indexed code does not seem to answer this.",
}


@dataclass(frozen=True)
class BlockView:
    """One evidence block as the page shows it: a mark, its citation linked, its lines
    highlighted with their numbers."""

    status: str  # verified, outside
    citation: str
    qualname: str
    note: str
    url: str
    #: (line number, highlighted HTML, whether it is the evidence itself)
    lines: list[tuple[int, str, bool]]

    @property
    def mark(self) -> str:
        return MARKS[self.status][0]

    @property
    def meaning(self) -> str:
        return MARKS[self.status][1]


@dataclass(frozen=True)
class FileBlocks:
    path: str
    blocks: list[BlockView]


def block_views(answer: dict[str, Any], back: str = "") -> list[FileBlocks]:
    """An extractive answer's evidence blocks, grouped by file in the answer's order."""
    repo = str(answer.get("repo", ""))
    groups: list[FileBlocks] = []
    for b in answer.get("blocks", []):
        path, start, end = str(b["path"]), int(b["start_line"]), int(b["end_line"])
        lines = [str(x) for x in b.get("lines", [])]
        shown = highlight_lines(_dedent(lines), path, str(b.get("language", "")))
        first = int(b.get("shown_start_line") or start)
        focus = b.get("focus") or (0, -1)
        numbered = [
            (n, line, int(focus[0]) <= n <= int(focus[1]))
            for n, line in zip(range(first, first + len(shown)), shown, strict=True)
        ]
        view = BlockView(
            "verified" if b.get("verified") else "outside",
            str(b.get("citation") or f"{path}:{start}-{end}"),
            str(b.get("qualname") or ""),
            str(b.get("note") or ""),  # why it is shown, as the CLI says it
            code_url(repo, path, start, end, symbol=str(b.get("qualname") or ""), back=back),
            numbered,
        )
        if groups and groups[-1].path == path:
            groups[-1].blocks.append(view)
        else:
            groups.append(FileBlocks(path, [view]))
    return groups


def _dedent(lines: Sequence[str]) -> list[str]:
    indents = [len(x) - len(x.lstrip()) for x in lines if x.strip()]
    cut = min(indents, default=0)
    return [x[cut:] for x in lines]


def looked_at(answer: dict[str, Any], back: str = "") -> list[SourceLine]:
    """Sources the answer's blocks and citations do not point into: code that was read
    but is not relied on (shown without a mark)."""
    return [s for s in source_lines(answer, back) if s.status == "uncited"]


# --- sources ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourceLine:
    """One line of an answer's "Sources": a mark, a location, a note."""

    status: str  # verified, uncited, outside, partial
    path: str
    start: int
    end: int
    qualname: str
    note: str
    url: str
    stale: bool = False

    @property
    def mark(self) -> str:
        return MARKS[self.status][0]

    @property
    def meaning(self) -> str:
        return MARKS[self.status][1]

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


#: How a source reached the context, when not by search (as the CLI says it).
VIA = {
    "graph:called_by": "caller, via the graph",
    "graph:tests": "test, via the graph",
    "graph:calls": "callee, via the graph",
}


def _overlaps(c: dict[str, Any], path: str, start: int, end: int) -> bool:
    return bool(c["path"] == path and c["start_line"] <= end and start <= c["end_line"])


def source_lines(answer: dict[str, Any], back: str = "") -> list[SourceLine]:
    """The sources marked ✓ (a verified citation points into it) or · (not cited), then
    verified citations beyond the sources (graph neighbours), then ✗ citations outside
    the retrieved context: the same marks as ``codecite ask`` prints."""
    repo = str(answer.get("repo", ""))
    citations = list(answer.get("citations", []))
    verified = [c for c in citations if c.get("verified")]
    out: list[SourceLine] = []
    for s in answer.get("sources", []):
        path, start, end = str(s["path"]), int(s["start_line"]), int(s["end_line"])
        cited = any(_overlaps(v, path, start, end) for v in verified)
        via = VIA.get(str(s.get("source", "")), "")
        note = ", ".join(x for x in (via, "" if cited else "not cited") if x)
        qualname = str(s.get("qualname") or "")
        url = code_url(repo, path, start, end, symbol=qualname, back=back)
        status = "verified" if cited else "uncited"
        out.append(SourceLine(status, path, start, end, qualname, note, url, bool(s.get("stale"))))
    for v in verified:
        path, start, end = str(v["path"]), int(v["start_line"]), int(v["end_line"])
        if not any(o.path == path and o.start <= start and end <= o.end for o in out):
            url = code_url(repo, path, start, end, back=back)
            out.append(SourceLine("verified", path, start, end, "", "graph neighbour", url))
    for c in citations:
        if c.get("verified"):
            continue
        status = citation_status(c)
        path, start, end = str(c["path"]), int(c["start_line"]), int(c["end_line"])
        note = (
            "partly outside the retrieved context"
            if status == "partial"
            else "cited, but not in the retrieved context: unverified"
        )
        out.append(
            SourceLine(
                status, path, start, end, "", note, code_url(repo, path, start, end, back=back)
            )
        )
    return out


# --- code -------------------------------------------------------------------------------------
def lexer_for(path: str, language: str) -> Lexer:
    """Pygments' lexer for a file (by its name, else the index's language, else text).
    ``stripnl=False``: leading blank lines are kept, so line numbers stay right."""
    options = {"stripnl": False, "ensurenl": True}
    try:
        return get_lexer_for_filename(path, **options)
    except ClassNotFound:
        pass
    try:
        return get_lexer_by_name(language, **options)
    except ClassNotFound:
        return TextLexer(**options)


def highlight_lines(lines: Sequence[str], path: str, language: str) -> list[str]:
    """Each source line as highlighted HTML (Pygments closes its spans at every line end,
    so the lines can be shown one by one)."""
    if not lines:
        return []
    out = highlight("\n".join(lines) + "\n", lexer_for(path, language), HtmlFormatter(nowrap=True))
    shown = out.split("\n")
    return [shown[i] if i < len(shown) else "" for i in range(len(lines))]


@lru_cache(maxsize=1)
def highlight_css() -> str:
    """The Pygments classes' colours, scoped to ``.code`` (served as a stylesheet)."""
    css = HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".code")
    return str(css)
