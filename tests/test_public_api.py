"""The public library surface: what ``codecite.__all__`` promises is importable, the
exported names are exactly the documented ones, and the facade searches and answers
with validated filters (the CLI uses nothing else)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from repos import copy_index

import codecite
from codecite.errors import UserError

FIXTURES = Path(__file__).parent / "fixtures"
PACKAGE = Path(codecite.__file__).parent
CLI = PACKAGE / "cli"


def test_every_exported_name_is_importable_and_nothing_else_is_promised() -> None:
    for name in codecite.__all__:
        assert getattr(codecite, name) is not None, name
    assert sorted(codecite.__all__) == sorted(set(codecite.__all__))
    assert {"Index", "Hit", "SearchResult", "Filters", "Answer", "Citation", "open_index"} <= set(
        codecite.__all__
    )
    with pytest.raises(AttributeError):
        codecite.Searcher  # noqa: B018 - internal, not exported
    assert set(codecite.__all__) <= set(dir(codecite))


def test_filters_parse_resolves_aliases_and_rejects_unknown_values() -> None:
    parsed = codecite.Filters.parse(["ts", "PY", "golang"], "src/**", ["function"])
    assert parsed == codecite.Filters(("typescript", "python", "go"), "src/**", ("function",))
    assert codecite.Filters.parse("rs").languages == ("rust",)
    assert not codecite.Filters.parse()
    with pytest.raises(UserError, match="unknown language 'klingon'; choose from: python"):
        codecite.Filters.parse(["klingon"])
    with pytest.raises(UserError, match="unknown kind 'lambda'"):
        codecite.Filters.parse(kinds=["lambda"])


def imports_of(path: Path, package: list[str] | None = None) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every import of ``codecite`` in ``path`` (a module of
    ``package``, by default the one it lies in), relative ones resolved, function-level
    and ``TYPE_CHECKING`` ones included (``name`` None for ``import codecite.x``)."""
    if package is None:  # an __init__.py's package is its folder, as a module's is
        package = list(path.relative_to(PACKAGE.parent).parent.parts)
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names if a.name.split(".")[0] == "codecite"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] == "codecite":
                found += [(target, a.name) for a in node.names]
    return found


def test_the_cli_uses_only_the_public_api() -> None:
    """No CLI module reaches into retrieval, answering or storage internals."""
    internal = (
        "codecite.retrieve",
        "codecite.store",
        "codecite.answer.answerer.Answerer",
        "codecite.answer.llm",
    )
    public = set(codecite.__all__)
    for module in CLI.glob("*.py"):
        for target, name in imports_of(module):
            full = f"{target}.{name}" if name else target
            assert not any(full.startswith(p) for p in internal), (module.name, full)
            # a public name comes through the door, not from the module defining it
            if name in public and target not in ("codecite", "codecite.errors"):
                raise AssertionError(f"{module.name}: import {name} from codecite, not {target}")


@pytest.mark.parametrize("room", ["server", "integrations"])
def test_the_server_and_integrations_use_only_the_public_api(room: str) -> None:
    """The server (HTTP routes, web page, Slack, MCP) and the integrations use
    ``codecite.__all__`` and ``codecite.errors`` only, besides their own modules: the
    public API is the one door (docs/DESIGN.md §2)."""
    own = f"codecite.{room}"
    public = {*codecite.__all__, "__version__"}
    checked = 0
    for module in sorted((PACKAGE / room).rglob("*.py")):
        checked += 1
        for target, name in imports_of(module):
            where = (module.relative_to(PACKAGE).as_posix(), target, name)
            if target == own or target.startswith(own + ".") or target == "codecite.errors":
                continue
            assert target == "codecite", where  # not codecite.x, relative or absolute
            assert name is None or name in public, where
    assert checked >= 2


def test_the_import_guard_sees_every_form_of_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "import codecite.api\n"
        "from codecite.filters import Filters\n"
        "from .. import Index\n"
        "if TYPE_CHECKING:\n    from ..retrieve.types import Hit\n"
        "def f():\n    from ..store import open_store\n"
    )
    assert imports_of(probe, ["codecite", "server"]) == [
        ("codecite.api", None),
        ("codecite.filters", "Filters"),
        ("codecite", "Index"),
        ("codecite.retrieve.types", "Hit"),
        ("codecite.store", "open_store"),
    ]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Path:
    return copy_index(indexed_shop, tmp_path_factory.mktemp("api") / "shop")


def test_search_and_ask_through_the_facade(shop: Path) -> None:
    with codecite.open_index(shop, create=False) as index:
        result = index.search(
            "loyalty discount", k=3, filters=codecite.Filters.parse(languages=["py"])
        )
        assert isinstance(result, codecite.SearchResult) and len(result.hits) == 3
        assert all(
            isinstance(h, codecite.Hit) and h.chunk.language == "python" for h in result.hits
        )
        ts_only = index.search("cart total", filters=codecite.Filters.parse(languages=["ts"]))
        assert ts_only.hits and {h.chunk.language for h in ts_only.hits} == {"typescript"}
        answer = index.ask("How is the loyalty discount computed?", llm="extractive")
        assert isinstance(answer, codecite.Answer) and answer.llm == "extractive"
        assert answer.citations and all(
            isinstance(c, codecite.Citation) and c.verified for c in answer.citations
        )
        with pytest.raises(UserError, match="empty"):
            index.search("   ")
        with pytest.raises(UserError, match="k must be"):
            index.search("x", k=0)


def test_ask_stream_yields_the_answer_last(shop: Path) -> None:
    with codecite.open_index(shop, create=False) as index:
        items = list(index.ask_stream("How is the loyalty discount computed?", llm=None))
    assert isinstance(items[-1], codecite.Answer)
    assert all(isinstance(piece, str) for piece in items[:-1])
    assert items[-1].citations


def test_ask_stream_streams_a_generated_answer_then_checks_it(shop: Path) -> None:
    from llm_server import Reply, running_chat_server

    from codecite.answer.llm import OpenAIChat

    with codecite.open_index(shop, create=False) as index:
        question = "How is the loyalty discount computed?"
        top = index.search(question, k=1).hits[0].chunk
        text = f"It is computed in {top.path}:{top.start_line}-{top.end_line}."
        with running_chat_server() as server:
            server.script = [Reply(text=text)]
            model = OpenAIChat("test-model", codecite.Endpoint(base_url=server.base_url))
            items = list(index.ask_stream(question, llm=model))
    *pieces, answer = items
    assert len(pieces) > 1 and "".join(pieces) == text  # streamed in several pieces
    assert isinstance(answer, codecite.Answer) and answer.answer == text
    assert [c.verified for c in answer.citations] == [True]


class Steps:
    """A lock that records when it is held (``in``/``out``), and a model that records
    when it writes (``model``): the order of an answer's steps."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def __enter__(self) -> None:
        self.events.append("in")

    def __exit__(self, *exc: object) -> None:
        self.events.append("out")


class WritingModel:
    """A chat model (:class:`codecite.LLM`) that answers ``text`` in two pieces."""

    name = "test-model"

    def __init__(self, text: str, steps: Steps) -> None:
        self.text, self.steps = text, steps

    def complete(self, messages, *, max_tokens=800, temperature=0.0, on_token=None):  # type: ignore[no-untyped-def]
        self.steps.events.append("model")
        half = len(self.text) // 2
        for piece in (self.text[:half], self.text[half:]):
            if on_token is not None:
                on_token(piece)
        return self.text


def test_one_ask_driver_holds_the_lock_for_the_index_never_for_the_model(shop: Path) -> None:
    """``Index.ask`` and ``ask_stream`` (and so a server's answers) read the index under
    the caller's lock and let the model write outside it."""
    question = "How is the loyalty discount computed?"
    with codecite.open_index(shop, create=False) as index:
        top = index.search(question, k=1).hits[0].chunk
        text = f"It is computed in {top.path}:{top.start_line}-{top.end_line}."
        for streamed in (False, True):
            steps, pieces = Steps(), []
            model = WritingModel(text, steps)
            if streamed:
                *pieces, answer = index.ask_stream(question, model, lock=steps)
            else:
                answer = index.ask(question, model, on_token=pieces.append, lock=steps)
            assert isinstance(answer, codecite.Answer) and answer.answer == text
            assert "".join(pieces) == text and len(pieces) == 2
            assert [c.verified for c in answer.citations] == [True]
            # the answerer, then prepare; the model outside the lock; then finish
            assert steps.events == ["in", "out", "in", "out", "model", "in", "out"], streamed
        steps = Steps()
        extractive = index.ask(question, "extractive", lock=steps)
        assert extractive.citations and steps.events == ["in", "out"] * 3


def test_search_across_repositories(shop: Path) -> None:
    with codecite.open_index(shop, create=False) as index:
        alone = index.search("loyalty discount", k=3)
        fused = codecite.search_across({"shop": index}, "loyalty discount", k=3)
        files = codecite.search_files_across({"shop": index}, "loyalty discount", k=2)
    assert all(isinstance(h, codecite.RepoHit) and h.repo == "shop" for h in fused)
    assert [h.hit.chunk.id for h in fused] == [h.chunk.id for h in alone.hits]
    assert fused[0].to_json()["repo"] == "shop"
    assert len(files) == 2 and {f.repo for f in files} == {"shop"}


def test_read_lines_is_the_one_reader_of_file_text(tmp_path: Path) -> None:
    """``Index.read_lines``: an indexed file as on disk now, scrubbed exactly as the
    index was; nothing outside the repository or the index; ranges checked (issue 21)."""
    from codecite.errors import LineRangeError, NotIndexedFileError
    from codecite.scrub import scrub

    secrets = FIXTURES / "secrets"
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("config.yaml", "aws_credentials", "app_settings.py"):
        shutil.copy(secrets / name, root / name)
    (tmp_path / "outside.txt").write_text("password: hunter2-outside\n")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    (root / "long.py").write_text("".join(f"X_{i} = {i}\n" for i in range(3000)))
    with codecite.open_index(root) as index:
        index.update(embed=False)
        for name in ("config.yaml", "aws_credentials", "app_settings.py"):
            shown = index.read_lines(name)
            text = (root / name).read_text()
            expected = scrub(text, index.config, path=name).text.split("\n")[:-1]
            assert shown.lines == expected and shown.total_lines == len(expected)
            assert (shown.start_line, shown.end_line, shown.truncated) == (1, len(expected), False)
            assert "«redacted:" in "\n".join(shown.lines)
        part = index.read_lines("config.yaml", 2, 4)
        assert (part.start_line, part.end_line, len(part.lines)) == (2, 4, 3)
        clamped = index.read_lines("config.yaml", 2, 10**9)
        assert clamped.end_line == clamped.total_lines
        cut = index.read_lines("long.py", 1, None, max_lines=100)
        assert (cut.end_line, cut.truncated) == (100, True)
        by_chars = index.read_lines("long.py", 10, None, max_chars=1000)
        assert by_chars.truncated and sum(len(x) + 1 for x in by_chars.lines) <= 1000
        for bad in ("../outside.txt", "/etc/passwd", "link.txt", ".", "", "nope.py", "a\\b"):
            with pytest.raises(NotIndexedFileError):
                index.read_lines(bad)
        for start, end in ((10**12, None), (0, None), (5, 2)):
            with pytest.raises(LineRangeError):
                index.read_lines("config.yaml", start, end)
        (root / "app_settings.py").unlink()  # an indexed file swapped for a link out
        (root / "app_settings.py").symlink_to(tmp_path / "outside.txt")
        with pytest.raises(NotIndexedFileError):
            index.read_lines("app_settings.py")
