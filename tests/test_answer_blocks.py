"""The block an answer shows of a class outline: the outline's own lines, found in the
file although a long class's later parts are dedented, shown from the header of the
method whose docstring holds the line (issue 38: `Response` was shown as a lone
``@property``; `Command` as a docstring whose method the reader could not see)."""

from __future__ import annotations

from codecite.answer.blocks import AnswerBlock, block_of, chunk_lines, line_states
from codecite.answer.compose import whole_lines
from codecite.chunking import chunk_file
from codecite.chunking.grammars import detect_language
from codecite.config import Config
from codecite.question.terms import Terms

METHODS = "".join(
    f"    @property\n"
    f"    def step_{i}(self) -> int:\n"
    f'        """Run step {i}.\n\n'
    f"        Args:\n"
    f"            self: the batch of step {i}\n"
    f'        """\n'
    f"        total = {i}\n"
    f"        return total * 2\n\n"
    for i in range(8)
)
TEXT = f'class Settings:\n    """Every setting of a batch."""\n\n{METHODS}'
FILE_LINES = TEXT.split("\n")


def _later_part():
    chunks = chunk_file(
        TEXT, path="settings.py", language=detect_language("settings.py"), repo="r",
        config=Config(max_chunk_lines=30, class_part_lines=20),
    )  # fmt: skip
    parts = [c for c in chunks if c.kind == "class"]
    assert len(parts) >= 2, [(c.kind, c.start_line, c.end_line) for c in chunks]
    return parts[-1]


def test_a_later_class_part_is_found_in_the_file_although_dedented() -> None:
    part = _later_part()
    assert part.content.startswith("@property")  # dedented: not the file's text
    lines = chunk_lines(part, lambda _path: FILE_LINES)
    assert lines and lines[0] == (part.start_line, "    @property")
    assert all(FILE_LINES[n - 1] == text for n, text in lines)
    assert not any("total * 2" in text for _, text in lines)  # bodies stay elided


def test_a_docstring_line_is_shown_from_its_method_header() -> None:
    part = _later_part()
    at = next(
        n for n in range(part.start_line, part.end_line + 1)
        if FILE_LINES[n - 1].strip().startswith("self: the batch of step")
    )  # fmt: skip
    block = block_of(part, at, "definition", lambda _path: FILE_LINES)
    shown = [t.strip() for t in block.lines[: at - block.shown_start]]
    assert any(t.startswith("def step_") for t in shown), block.lines  # whose docstring
    assert block.shown_start < at <= block.shown_start + len(block.lines) - 1
    assert block.focus_start == at


def test_line_states_track_strings_and_brackets() -> None:
    lines = ["def f(", "    a,", "):", '    """Doc', "    Args:", '    """', "    return 1"]
    assert line_states(lines) == [
        (True, False), (False, False), (False, True), (True, False), (False, False),
        (False, True), (True, True),
    ]  # fmt: skip
    assert whole_lines(lines) == [False, False, False, False, False, False, True]


SEND = (
    "function sendFile(path, options) {\n"
    + "".join(f"  var step{i} = prepare({i});\n" for i in range(14))
    + "\n  if (!options.root && !isAbsolute(path)) {\n"
    "    throw new TypeError('path must be absolute or specify root');\n"
    "  }\n\n" + "".join(f"  var after{i} = finish({i});\n" for i in range(14)) + "}\n"
)


def _block_at(text: str, path: str, language: str, holding: str) -> tuple[AnswerBlock, int]:
    """The block of ``text``'s one function around its line holding ``holding``."""
    chunks = chunk_file(text, path=path, language=language, repo="r", config=Config())
    (function,) = [c for c in chunks if c.kind == "function"]
    lines = text.split("\n")
    at = next(i for i, t in enumerate(lines, 1) if holding in t)
    return block_of(function, at, "line", lambda _path: lines), at


def test_a_lone_statement_is_shown_with_the_block_holding_it() -> None:
    block, _ = _block_at(SEND, "send.js", "javascript", "throw new TypeError")
    assert block.lines[0].strip().startswith("if (!options.root"), block.lines
    assert len(block.lines) > 3  # more than the if, the throw and its brace


READ_ALL = (
    "package lines\n\n"
    "func readAll(in io.Reader) ([]string, error) {\n"
    "\tvar out []string\n" + "".join(f"\tcount{i} := {i}\n" for i in range(8)) + '\ttoken := ""\n\n'
    "\treader := bufio.NewReader(in)\n\n"
    "loop:\n"
    "\tfor {\n"
    "\t\tch, _, err := reader.ReadRune()\n"
    "\t\tif err == io.EOF {\n"
    "\t\t\tbreak loop\n"
    "\t\t}\n" + "".join(f"\t\tstep{i}(ch)\n" for i in range(25)) + "\t}\n"
    "\treturn append(out, token), nil\n"
    "}\n"
)


def test_a_lone_statement_between_blank_lines_is_shown_with_its_neighbours() -> None:
    """A statement with a blank line on each side and a Go label below it, its
    function's header too far above to show, is shown with the lines around it, not
    alone."""
    block, at = _block_at(READ_ALL, "lines.go", "go", "bufio.NewReader")
    assert block.shown_start < at < block.shown_start + len(block.lines) - 1, block.lines
    assert sum(1 for line in block.lines if line.strip()) >= 5, block.lines
    assert any("ReadRune" in line for line in block.lines), block.lines


DOCUMENTED = (
    "def text(self) -> str:\n"
    '    """Content of the response, in unicode.\n\n'
    "    If the encoding is None, it is guessed from the content.\n"
    "    The guess is slow on large bodies.\n"
    '    """\n'
    + "".join(f"    step{i} = self.prepare({i})\n" for i in range(30))
    + "    return step0\n"
)


def test_a_window_never_starts_inside_a_string() -> None:
    block, at = _block_at(DOCUMENTED, "m.py", "python", "is guessed from the content")
    assert block.shown_start <= 2 and block.lines[-1] != "", block.lines  # the docstring whole
    assert block.shown_start <= at < block.shown_start + len(block.lines)


STARTUP = (
    "async def startup(self, config):\n"
    + "".join(f"    step{i} = self.prepare({i})\n" for i in range(20))
    + "    try:\n"
    "        server = await loop.create_server(\n"
    "            create_protocol,\n"
    "            host=config.host,\n"
    "            port=config.port,\n"
    "            ssl=config.ssl,\n"
    "            backlog=config.backlog,\n"
    "        )\n"
    "    except OSError as exc:  # the port is taken\n"
    "        logger.error(exc)\n"
    "        await self.lifespan.shutdown()\n"
    "        sys.exit(1)\n"
    "\n" + "".join(f"    after{i} = self.finish({i})\n" for i in range(20))
)


def test_a_window_never_ends_on_the_line_opening_a_block() -> None:
    """What an ``except`` (or ``if ... {``) does is shown with it: a window that would
    end on the line opening a block shows that block's first statements too."""
    block, _ = _block_at(STARTUP, "server.py", "python", "port=config.port")
    assert block.lines[-1].strip() == "sys.exit(1)", block.lines
    assert any(line.strip().startswith("except OSError") for line in block.lines)


STRIP = (
    "def should_strip_auth(self, old_url, new_url):\n"
    '    """Decide whether Authorization header should be removed when redirecting"""\n'
    "    old_parsed = urlparse(old_url)\n"
    "    new_parsed = urlparse(new_url)\n"
    "    if old_parsed.hostname != new_parsed.hostname:\n"
    "        return True\n"
    "    # Special case: allow http -> https redirect when using the standard\n"
    "    # ports. This isn't specified by RFC 7235, but is kept to avoid\n"
    "    # breaking backwards compatibility with older versions of requests\n"
    "    # that allowed any redirects on the same host.\n"
    "    if (\n"
    '        old_parsed.scheme == "http"\n'
    "        and old_parsed.port in (80, None)\n"
    '        and new_parsed.scheme == "https"\n'
    "        and new_parsed.port in (443, None)\n"
    "    ):\n"
    "        return False\n" + "".join(f"    step{i} = {i}\n" for i in range(30))
)


def test_a_window_shows_the_signature_above_it_and_closes_what_it_opens() -> None:
    """A window starting on a docstring's line shows the signature above it; one that
    would end inside a condition's brackets (``if (``, requests' ``should_strip_auth``)
    goes on to the line closing them and what that opens."""
    block, _ = _block_at(STRIP, "sessions.py", "python", "Decide whether Authorization")
    assert block.lines[0].startswith("def should_strip_auth"), block.lines
    assert [line.strip() for line in block.lines[-2:]] == ["):", "return False"], block.lines


def test_a_bare_first_line_quotes_the_doc_sentence_that_holds_the_question() -> None:
    """With no summary and no statement holding the question, the first line quotes a
    whole sentence of the comments or doc text shown (a wrapped paragraph joined, never
    one of its lines alone), the one holding most of the question's words."""
    from codecite.answer.compose import doc_sentence
    from codecite.question import read

    def terms(question: str) -> Terms:
        return read(question).terms(lambda _term: 1, 100)

    desc = [
        "    default = 30",
        '    desc = """\\',
        "        Timeout for graceful workers restart.",
        "",
        "        After receiving a restart signal, workers have this much time to finish",
        "        serving requests. Workers still alive after the timeout (starting from",
        "        the receipt of the restart signal) are force killed.",
        '        """',
    ]
    asked = terms("How long may workers keep serving requests after a restart signal?")
    assert doc_sentence(desc, asked) == (
        "After receiving a restart signal, workers have this much time to finish serving requests."
    )
    gzip = [
        "        if len(body) < self.minimum_size and not more_body:",
        "            # Don't apply GZip to small outgoing responses.",
        "            await self.send(self.initial_message)",
    ]
    small = terms("Does compression apply to small responses too?")
    assert doc_sentence(gzip, small) == "Don't apply GZip to small outgoing responses."
    assert doc_sentence(gzip, terms("Which database driver is used?")) == ""
    # a Sphinx attribute comment (#:) and reStructuredText roles read as Markdown
    cookies = [
        "        #: A CookieJar containing all currently outstanding cookies set on this",
        "        #: session. By default it is a",
        "        #: :class:`RequestsCookieJar <requests.cookies.RequestsCookieJar>`, but",
        "        #: may be any other ``cookielib.CookieJar`` compatible object.",
        "        self.cookies = cookiejar_from_dict({})",
    ]
    assert doc_sentence(cookies, terms("Can any compatible jar be the default?")) == (
        "By default it is a `RequestsCookieJar`, but may be any other `cookielib.CookieJar`"
        " compatible object."
    )

    code_only = ["    total = price * quantity", "    return total"]
    assert doc_sentence(code_only, terms("How is the total price computed?")) == ""
    # a comment with no stop ends its thought where its paragraph ends (nose2's
    # ``JUnitXmlReporter.__init__``), but a wrapped line of a longer one does not, nor
    # commented-out code
    config = [
        "    def __init__(self) -> None:",
        "        # Read argument from configuration file, or filled with default",
        '        self.path = self.config.as_str("path", default="junit.xml")',
    ]
    read_file = terms("Where is the configuration file read?")
    assert doc_sentence(config, read_file) == (
        "Read argument from configuration file, or filled with default."
    )
    wrapped = ["    # Read argument from configuration file, or filled with", "    # the default"]
    assert doc_sentence(wrapped, read_file) == (
        "Read argument from configuration file, or filled with the default."
    )
    commented = ["    # config = read(file_path, cfg=[1, 2], x=3)", "    pass"]
    assert doc_sentence(commented, read_file) == ""


def test_a_summary_reads_restructuredtext_roles_as_markdown() -> None:
    """A docstring's roles (``:class:`HTTPError```, ``:meth:`~a.B.c```, a titled
    target) are shown as the name in backticks, as Markdown renders them."""
    from codecite.answer.compose import doc_markup

    assert doc_markup("Raises :class:`HTTPError`, if one occurred.") == (
        "Raises `HTTPError`, if one occurred."
    )
    assert doc_markup("See :py:meth:`~pkg.Session.send` and :func:`pkg.get`.") == (
        "See `send` and `pkg.get`."
    )
    assert doc_markup("A :class:`Jar <pkg.cookies.Jar>` of ``cookies``.") == (
        "A `Jar` of `cookies`."
    )


def test_a_first_line_with_nothing_else_to_say_quotes_the_signature_on_one_line() -> None:
    """No docstring, no statement, comment or string holding the question: the first
    line quotes the signature the block shows, on one line as one would write it."""
    from codecite.answer.compose import _lead, _Shown
    from codecite.question import read
    from codecite.types import Chunk

    signature = "def requires(\n    scopes,\n    status_code=403,\n    redirect=None,\n):"
    code = f"{signature}\n    return list(scopes)"
    chunk = Chunk(
        "c", "r", "auth.py", "python", "function", "requires", "requires", 4, 9, code, "",
        "h", signature,
    )  # fmt: skip
    block = AnswerBlock(
        "auth.py", 4, 9, "requires", "python", tuple(code.splitlines()), "definition"
    )
    terms = read("Can a page be limited to signed-in people?").terms(lambda _t: 1, 100)
    assert _lead(_Shown(block, chunk, None), terms) == (
        "`requires` (auth.py:4-9): `def requires(scopes, status_code=403, redirect=None)`."
    )
    window = AnswerBlock(
        "auth.py", 4, 9, "requires", "python", ("    return list(scopes)",), "line",
        shown_start=9,
    )  # fmt: skip
    assert _lead(_Shown(window, chunk, None), terms) == "`requires` (auth.py:4-9)."


def test_a_blocks_note_says_its_role_in_json_and_on_the_page() -> None:
    """One table says why a block is shown ("raises it"): the terminal, the Markdown,
    ``--json`` and the page all read it from the block."""
    from codecite.server.web.render import block_views

    raiser = AnswerBlock("shop/tax.py", 20, 28, "get_rate", "python", ("raise X",), "raiser")
    line = AnswerBlock("shop/tax.py", 30, 31, "f", "python", ("pass",), "line")
    assert (raiser.note, line.note) == ("raises it", "")
    data = {"repo": "shop", "blocks": [raiser.to_json(), line.to_json()]}
    assert data["blocks"][0]["note"] == "raises it"
    (group,) = block_views(data)
    assert [view.note for view in group.blocks] == ["raises it", ""]


def test_a_doc_comments_summary_ends_before_its_tags() -> None:
    """A summary is the first sentence of the prose before the tags: JSDoc's ``@param``
    and Sphinx's ``:param x:`` lines are no sentence of it, and a doc comment of tags
    alone (koa's ``Application`` constructor) has none; an address is no tag."""
    from codecite.answer.blocks import first_sentence

    assert first_sentence("Return the job\n@return {Job} the job") == "Return the job"
    assert first_sentence("Return the job.\n:param x: the id\n:returns: a job") == "Return the job."
    assert first_sentence("@param {object} [options] Application options\n@param x") == ""
    assert (
        first_sentence("Mail it to ops@example.com today.") == "Mail it to ops@example.com today."
    )


def test_examples_docs_and_tests_come_after_the_code_itself() -> None:
    """An impact answer lists the library's callers before its examples' and tests'
    (Go projects keep examples in ``_examples/``, a folder Go's tools skip)."""
    from codecite.answer.blocks import secondary_path

    assert not secondary_path("mux.go") and not secondary_path("src/app/routes.py")
    for path in ("_examples/rest/main.go", "examples/app.js", "docs/guide.md", "mux_test.go"):
        assert secondary_path(path), path


def test_a_comment_over_lines_is_no_code_in_a_brace_language() -> None:
    """In TypeScript a ``/** ... */`` doc comment whose lines carry no ``*`` (ky's style)
    is no statement, and the brackets of a ``//`` comment open nothing; in Python a
    ``/*`` in a comment (a glob) opens nothing either."""
    ts = [
        "export type RetryOptions = {",
        "\t/**",
        "\tThe HTTP status codes allowed to retry (see below.",
        "\t*/",
        "\tstatusCodes?: number[];",
        "\t// the methods (#91",
        "\tmethods?: string[];",
        "};",
    ]
    assert whole_lines(ts, blocks=True) == [False, False, False, False, True, False, True, False]
    python = ["def f():", "    # files under a/*.py", "    return g(1)"]
    assert line_states(python) == [(True, True)] * 3


PARSED = '''class ParsedVariant(NamedTuple):
    """The result of parsing one templated file.

    Args:
        tree: the parsed segments, None when parsing failed.
    """

    templated_file: str
    tree: Optional[str]
    violations_found: list[str]

    def violations(self) -> list[str]:
        """The lexing and parsing violations together."""
        return [*self.violations_found]
'''


def test_a_small_class_is_shown_whole_its_methods_too() -> None:
    """A class of fewer than 25 lines is read whole, as a small function is, though its
    outline elides its methods (a NamedTuple's fields and its one method)."""
    lines = PARSED.split("\n")
    chunks = chunk_file(PARSED, path="common.py", language="python", repo="r", config=Config())
    (outline,) = [c for c in chunks if c.kind == "class"]
    block = block_of(outline, 2, "line", lambda _path: lines)
    assert (block.start_line, block.end_line) == (outline.start_line, outline.end_line)
    assert "return [*self.violations_found]" in "\n".join(block.lines)
    assert block.focus_start == 2
