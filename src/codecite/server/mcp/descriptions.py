"""What an agent reads about the tools: their names, descriptions and the shared
parameters' descriptions, and the server's instructions."""

from __future__ import annotations

from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import Field

TOOL_NAMES = (
    "search_code",
    "ask_codebase",
    "read_code",
    "find_callers",
    "find_callees",
    "find_tests",
    "list_repos",
    "index_status",
    "explain_symbol",
)

SERVER_INSTRUCTIONS = """\
codecite answers questions about indexed code repositories. Every result cites code as \
path:start-end (repository-relative, 1-based, inclusive lines). Start with search_code to \
locate code; read_code shows exact lines around a hit; find_callers, find_callees and \
find_tests follow the code graph from a function, method or class; explain_symbol documents \
one of them (parameters, raises, usage examples, tests); ask_codebase gives a short answer \
with checked citations; list_repos names the repositories you can query."""


Repo = Annotated[
    str | None,
    Field(description="Repository name (see list_repos); needed only when you can read several."),
]
Symbol = Annotated[
    str,
    Field(
        description="A function, method or class: qualified name (Order.mark_paid), plain name "
        "(checkout), or path::qualname (shop/tax.py::_round_cents) to pick one of several."
    ),
]

DESCRIPTIONS = {
    "search_code": (
        "Find code by meaning or by name. Use this FIRST to locate the code for a question or "
        "task (where something happens, how a feature is built, what a name refers to). Returns "
        "ranked chunks (functions, methods, classes, sections) with path:start-end citations, "
        "why each matched, and their code. Narrow with language, path glob or chunk kind. "
        "The query may be a whole pasted bug report (traceback, error message, snippet); "
        "files=true ranks files, each with its best chunks. "
        "Follow up with read_code for surrounding lines, or find_callers / find_callees / "
        "find_tests to follow the code graph."
    ),
    "ask_codebase": (
        "Answer a question about the codebase in a few sentences, grounded in retrieved code, "
        "with citations (path:start-end) checked against that code. Use for 'how does X work' "
        "or 'why does Y happen' when you want an explanation rather than raw hits; it says so "
        "when the index does not hold enough to answer. Slower than search_code; to locate "
        "code, prefer search_code."
    ),
    "read_code": (
        "Read exact lines of an indexed file, with line numbers: use it to see the context "
        "around a search hit or citation before editing or explaining code. path is "
        "repository-relative, as in citations. Lines are 1-based and inclusive; a long range "
        "is cut at the server's limit (2,000 lines or 50,000 characters unless configured "
        "otherwise): the result then says so and where to read on (call again from there). "
        "Secrets are redacted as in the index. Only indexed files can be read."
    ),
    "find_callers": (
        "Who calls this function, method or class? Use before changing a signature or "
        "behaviour to see what depends on it, or to trace how a code path is reached. Returns "
        "each caller with its citation and the calling line; callers that are tests are "
        "marked. An ambiguous name returns the candidates to choose from."
    ),
    "find_callees": (
        "What does this function or method call? Use to understand what a function depends "
        "on, or to walk down a code path. Returns each callee with its citation and the line "
        "of the call."
    ),
    "find_tests": (
        "Which tests exercise this function, method or class? Use before or after changing "
        "code to know which tests to run, read or update. Returns each test with its citation."
    ),
    "list_repos": (
        "List the repositories you can query, with their names for the repo / repos "
        "arguments of the other tools. Use when a tool asks for a repository or to see what "
        "is available."
    ),
    "explain_symbol": (
        "Explain one function, method or class the way its documentation would: a one-line "
        "summary, parameters and return value with their types, exceptions it raises and "
        "values it returns early, what it calls, 2-3 real call sites as usage examples and "
        "the tests that exercise it with their asserting lines; every statement cited "
        "path:start-end and checked. Use it before changing, reviewing or testing a symbol, "
        "or to document it; one call instead of read_code + find_callers + find_tests. "
        "symbol: a name, path::qualname or path:line; an ambiguous name returns the "
        "candidates to choose from."
    ),
    "index_status": (
        "How complete and fresh a repository's index is: files, chunks, languages, embedder, "
        "the indexed and current commits, and files changed since indexing. Use when results "
        "look stale, incomplete or missing a file you expected."
    ),
}

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
