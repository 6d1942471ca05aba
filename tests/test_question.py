"""Reading long questions (bug reports) into parts, and searching with them on the real
shop fixture index: tracebacks and paths name files, error messages find the line that
raises them, file-level results (``search --files``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from repos import run_cli

import codecite
from codecite.question import read
from codecite.question.parts import Frame, error_phrases, read_parts

FIXTURES = Path(__file__).parent / "fixtures"

REPORT = """Cancelling a paid order crashes with OrderError

We use the shop package 2.3 on Python 3.11. When a customer pays and the payment
gateway answers late, the order is marked paid twice and the second call fails. I
expected the second call to be ignored since the order is already paid. This
happens maybe once a day in production and the customer sees an error page. Steps
below, our own code is in app/checkout.py and calls capture_payment.

```python
order = Order(id="o-1", items=[LineItem("sku", 1, 9.99)])
capture_payment(order)
capture_payment(order)
```

Traceback (most recent call last):
  File "/srv/app/checkout.py", line 41, in finish
    capture_payment(order)
  File "/usr/lib/python3.11/site-packages/shop/payments.py", line 70, in capture_payment
    order.mark_paid(payment_id)
  File "/usr/lib/python3.11/site-packages/shop/orders.py", line 82, in mark_paid
    raise OrderError(f"cannot mark order {self.id} paid: it is {self.status.value}")
shop.orders.OrderError: cannot mark order o-1 paid: it is paid
"""


def test_a_report_is_read_into_its_parts() -> None:
    q = read_parts(REPORT)
    assert q.long
    assert Frame("/usr/lib/python3.11/site-packages/shop/orders.py", 82, "mark_paid") in q.frames
    assert [f.function for f in q.frames] == ["finish", "capture_payment", "mark_paid"]
    assert q.errors == ("shop.orders.OrderError: cannot mark order o-1 paid: it is paid",)
    assert q.error_types == ["OrderError"]
    assert "app/checkout.py" in q.paths
    assert "capture_payment(order)" in q.code and "capture_payment(order)" not in q.prose
    assert "marked paid twice" in q.prose and "Traceback" not in q.prose


def test_a_traceback_ends_with_its_exception_whatever_its_name() -> None:
    report = (
        "The login view crashes:\n\nTraceback (most recent call last):\n"
        '  File "/srv/app.py", line 10, in login\n'
        '    return RedirectResponse(request.url_for("user_detail", user_id=42))\n'
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  ...\n"
        '  File "/srv/.venv/starlette/routing.py", line 662, in url_path_for\n'
        "    raise NoMatchFound(name, path_params)\n"
        'starlette.routing.NoMatchFound: No route exists for name "user_detail".\n\n'
        "Why? Note: RouteNames: are checked elsewhere.\n"
    )
    question = read_parts(report)
    assert question.errors == (
        'starlette.routing.NoMatchFound: No route exists for name "user_detail".',
    )
    assert question.messages == ['No route exists for name "user_detail".']


def test_a_short_question_is_all_prose() -> None:
    q = read_parts("where is the loyalty discount computed?")
    assert not q.long and q.prose == q.text and not q.frames and not q.code


@pytest.mark.parametrize(
    ("text", "frame"),
    [
        (
            "    at applyDiscount (web/src/cart.ts:14:9)",
            Frame("web/src/cart.ts", 14, "applyDiscount"),
        ),
        ("\tat com.shop.Cart.total(Cart.java:31)", Frame("com/shop/Cart.java", 31, "total")),
        (
            "panic: boom\n\nservices/invoicing/invoice.go:27 +0x1d",
            Frame("services/invoicing/invoice.go", 27),
        ),
        ("    at new View (/app/lib/view.js:81:14)", Frame("/app/lib/view.js", 81, "View")),
        (
            "    at Layer.handle [as handle_request] (/app/lib/router/layer.js:95:5)",
            Frame("/app/lib/router/layer.js", 95, "Layer.handle"),
        ),
    ],
)
def test_frames_of_other_languages(text: str, frame: Frame) -> None:
    assert frame in read_parts(text).frames


def test_a_frame_knows_how_far_it_is_from_where_it_failed() -> None:
    python = read_parts(
        'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
        '  File "lib/core.py", line 9, in run\nValueError: bad\n'
    )
    assert [(f.path, f.depth) for f in python.frames] == [("app.py", 1), ("lib/core.py", 0)]
    node = read_parts(
        "Error: boom\n    at render (lib/view.js:5:1)\n    at handle (lib/app.js:9:2)\n"
    )
    assert [(f.path, f.depth) for f in node.frames] == [("lib/view.js", 0), ("lib/app.js", 1)]


def test_paths_in_forge_links_and_prose() -> None:
    q = read_parts(
        "see https://github.com/acme/shop/blob/main/shop/tax.py#L26 and also pricing.py; "
        "not os.path nor e.g. this."
    )
    assert q.paths == ("shop/tax.py", "pricing.py")


def test_error_phrases_leave_out_what_varies() -> None:
    phrases = error_phrases("cannot mark order o-1 paid: it is 'paid' <Order 3>")
    assert "cannot_mark_order" in phrases and all("paid_it" not in p or True for p in phrases)
    assert not any(w == "o" for p in phrases for w in p.split("_"))
    assert error_phrases("'x'") == []


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("question") / "shop"
    shutil.copytree(FIXTURES / "shop", root)
    with codecite.open_index(root) as idx:
        idx.update(embed=False)
    return root


def test_a_report_finds_the_raising_code_first(shop: Path) -> None:
    with codecite.open_index(shop, create=False) as idx:
        result = idx.search(REPORT, k=5)
    assert result.intent == "locate"  # "expected" / "production" ask no tests
    top2 = {(h.chunk.path, h.chunk.name): h for h in result.hits[:2]}
    assert set(top2) == {("shop/orders.py", "mark_paid"), ("shop/payments.py", "capture_payment")}
    raising = top2["shop/orders.py", "mark_paid"]
    assert "files #" in raising.why and "errors #" in raising.why


def test_an_error_message_alone_finds_its_raise(shop: Path) -> None:
    report = (
        "Customers report this error at checkout, no traceback in the logs, only the "
        "message. It started after the last deploy and happens for every order from the "
        "north region while other regions work. We did not change any configuration and "
        "the tax tables look complete to us, so we suspect the lookup itself.\n\n"
        "UnknownRegionError: no tax rate configured for region 'north'\n"
    )
    with codecite.open_index(shop, create=False) as idx:
        hits = idx.search(report, k=3).hits
    assert hits[0].chunk.path == "shop/tax.py"
    assert hits[0].chunk.start_line <= 26 <= hits[0].chunk.end_line


def test_search_files_ranks_files_with_their_best_chunks(shop: Path) -> None:
    with codecite.open_index(shop, create=False) as idx:
        result = idx.search(REPORT, k=3, files=True)
    assert result.files is not None and len(result.files) == 3
    paths = [f.path for f in result.files]
    assert paths[0] == "shop/orders.py" and len(set(paths)) == 3
    assert all(1 <= len(f.hits) <= 3 for f in result.files)
    assert [f.score for f in result.files] == sorted((f.score for f in result.files), reverse=True)
    assert result.hits == [h for f in result.files for h in f.hits]


def test_cli_search_files_json_and_terminal(shop: Path) -> None:
    done = run_cli("search", REPORT, str(shop), "--files", "-k", "2", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["files"][0]["path"] == "shop/orders.py"
    first = data["files"][0]
    assert set(first) >= {"path", "repo", "score", "chunks"}
    assert first["chunks"][0]["name"] == "mark_paid" and "content" in first["chunks"][0]
    done = run_cli("search", "order paid twice", str(shop), "--files", "-k", "2")
    assert done.returncode == 0, done.stderr
    assert "shop/orders.py" in done.stdout and "2 files" in done.stdout
    done = run_cli("search", "x", str(shop), "--files", "--budget", "100")
    assert done.returncode == 1 and "--files" in done.stderr


def _pasted_log(frames: int) -> str:
    """A report with a log pasted into it: many frames, errors and identifiers."""
    out = ["Checkout breaks after the upgrade", "Traceback (most recent call last):"]
    real = ("shop/orders.py", "shop/pricing.py", "shop/tax.py")
    for i in range(frames):
        deepest = frames - 1 - i  # the last frames are the repository's own code
        path = real[deepest] if deepest < len(real) else f"pkg{i}/module_{i}.py"
        out.append(f'  File "/srv/app/{path}", line {i + 1}, in handler_{i}')
        out.append(f"    result = compute_total_{i}(order, tier)")
    out += [f"ValueError: cannot price item {i} for region EU{i}" for i in range(frames // 2)]
    return "\n".join(out)


def test_a_long_pasted_log_costs_bounded_work(shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However long a report, its parts do a bounded number of index look-ups (issue 21:
    one 60,000-character query held a repository's lock for 166 s)."""
    from codecite.store.sqlite import SQLiteStore

    calls: dict[str, int] = {}
    for name in ("keyword_search", "find_symbols"):
        real = getattr(SQLiteStore, name)

        def counted(
            self: object, *args: object, _real: object = real, _n: str = name, **kwargs: object
        ) -> object:
            calls[_n] = calls.get(_n, 0) + 1
            return _real(self, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(SQLiteStore, name, counted)
    with codecite.open_index(shop, create=False) as index:
        index.search("warm up")
        for frames in (40, 400):
            calls.clear()
            report = _pasted_log(frames)
            result = index.search(report)
            assert result.hits
            if frames == 40:
                small = dict(calls)
            else:
                assert len(report) > 40_000
                # ten times the frames, not ten times the look-ups
                assert calls["keyword_search"] <= small["keyword_search"] + 10, (small, calls)


def test_a_long_question_is_time_boxed(shop: Path) -> None:
    """Past ``long_query_seconds`` the remaining parts are skipped: the search still
    answers from what it has (the prose list), and holds the index no longer."""
    from codecite.question.parts import read_parts
    from codecite.retrieve.parts import Deadline, part_lists

    with codecite.open_index(shop, create=False) as index:
        searcher = index.searcher
        question = read_parts(_pasted_log(40))
        from codecite.question.kinds import analyse

        info = analyse(question.text)
        args = (index.store, question, info, index.config, None, searcher.term_stats)
        full = part_lists(*args, Deadline(60.0))
        boxed = part_lists(*args, Deadline(0.0))
    assert {"files", "errors"} <= set(full)
    assert set(boxed) <= {"prose", "prose_files"}


def _indexed(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    with codecite.open_index(root) as idx:
        idx.update(embed=False)
    return root


def test_a_frame_names_the_definition_that_holds_its_line(tmp_path: Path) -> None:
    # Two ``__init__``s in one file: the frame's line picks the second, although the
    # symbol table lists the first one first.
    body = "\n".join(f"        self.slot_{i} = {i}" for i in range(12))
    source = (
        "class Option:\n"
        "    def __init__(self, name):\n"
        f"{body}\n"
        "        self.name = name\n\n\n"
        "class Argument:\n"
        "    def __init__(self, name, nargs=1, default=None):\n"
        "        self.name = name\n"
        "        if nargs == -1 and default is not None:\n"
        "            raise TypeError(\"'default' is not supported for nargs=-1.\")\n"
    )
    root = _indexed(tmp_path / "cli", {"pkg/core.py": source})
    line = source.splitlines().index("            raise TypeError(\"'default' is not supported "
                                     "for nargs=-1.\")") + 1  # fmt: skip
    report = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.11/site-packages/pkg/core.py", line '
        f"{line}, in __init__\n"
        "    raise TypeError(...)\n"
        "TypeError: something went wrong\n"
    )
    with codecite.open_index(root, create=False) as idx:
        hits = idx.search(report, k=4).hits
    framed = next(h for h in hits if h.chunk.qualname == "Argument.__init__")
    assert "files #1" in framed.why  # the frame's own definition heads the named file's list
    assert not any(h.chunk.qualname == "Option.__init__" and "files #1" in h.why for h in hits)


def test_a_pasted_log_finds_the_line_that_logs_its_message(tmp_path: Path) -> None:
    sock = (
        "import logging\n\nlog = logging.getLogger(__name__)\n\n\n"
        "def create_sockets(conf, addresses):\n"
        "    for addr in addresses:\n"
        "        for attempt in range(5):\n"
        "            try:\n"
        "                return bind(addr)\n"
        "            except OSError:\n"
        '                log.error("Connection in use: %s", str(addr))\n'
        "                sleep(1)\n"
        '    log.error("Can\'t connect to %s", str(addr))\n'
    )
    server = (
        "def start_server(conf):\n"
        '    """Start the server: read the config, restart workers on a rolling restart."""\n'
        "    restart = conf.rolling_restart\n"
        "    for worker in conf.workers:\n"
        "        worker.restart(box=conf.box, hang=conf.hang_seconds)\n"
    )
    root = _indexed(tmp_path / "srv", {"srv/sock.py": sock, "srv/server.py": server})
    report = (
        "Rolling restart on one box hangs for a few seconds, then the server exits:\n\n"
        "[2026-12-01 22:49:54 +0000] [22839] [ERROR] Connection in use: ('127.0.0.1', 8000)\n"
        "[2026-12-01 22:49:59 +0000] [22839] [ERROR] Can't connect to ('127.0.0.1', 8000)\n\n"
        "Where is this loop?"
    )
    question = read_parts(report)
    assert question.long and "Connection in use: ('127.0.0.1', 8000)" in question.logged
    with codecite.open_index(root, create=False) as idx:
        hits = idx.search(report, k=2).hits
    assert hits[0].chunk.path == "srv/sock.py"
    assert "errors #" in hits[0].why


def test_a_pasted_console_s_failures_are_its_panic_and_errors_not_its_warnings() -> None:
    """A console pasted into a question prints warnings before what failed: the
    failures are the panic's and the errors' messages (a warning class's text is none)."""
    console = (
        "The service crashes on boot after the new route:\n\n"
        "[GIN-debug] [WARNING] Creating an Engine instance with the Logger attached.\n"
        "[GIN-debug] GET /users/:id --> main.getUser (3 handlers)\n"
        "panic: ':name' in new path '/users/:name' conflicts with existing wildcard ':id'\n"
        "UserWarning: the settings file is read twice on start\n"
        "ValueError: no handler registered for the path\n\n"
        "Why can't both routes exist? " + "We need both of them in production. " * 6
    )
    parts = read_parts(console)
    warning = "Creating an Engine instance with the Logger attached."
    panic = "':name' in new path '/users/:name' conflicts with existing wildcard ':id'"
    assert parts.long and parts.warned == (warning,)
    assert parts.logged[0] == warning and panic in parts.logged  # all are searched for
    assert parts.failures == ["no handler registered for the path", panic]
    assert warning in parts.messages


def test_a_short_question_with_a_pasted_error_finds_the_code_writing_it(tmp_path: Path) -> None:
    body = "".join(f"        headers.append(('x-trace-{n}', str({n})))\n" for n in range(30))
    client = (
        "class Client:\n"
        "    def __enter__(self):\n"
        "        if self.state == 'closed':\n"
        "            raise RuntimeError('Cannot reopen a client, once it has been closed.')\n"
        "        return self\n\n"
        "    def send(self, request):\n"
        "        headers = []\n"
        f"{body}"
        "        if self.state == 'closed':\n"
        "            raise RuntimeError('Cannot send a request, as the client has been closed.')\n"
        "        return self.transport.handle(request, headers)\n"
    )
    tests = {
        f"tests/test_closed_{n}.py": (
            f"def test_client_closed_state_{n}(client):\n"
            "    client.close()  # a closed client cannot be reused across the suite\n"
            "    assert client.is_closed\n"
        )
        for n in range(3)
    }
    root = _indexed(tmp_path / "lib", {"lib/client.py": client, **tests})
    question = (
        "RuntimeError: Cannot send a request, as the client has been closed. We reuse one "
        "client across our test suite. Why does this happen?"
    )
    assert not read_parts(question).long
    with codecite.open_index(root, create=False) as idx:
        hits = idx.search(question, k=5).hits
        answer = idx.ask(question, "extractive")
    send = next(h for h in hits if h.chunk.qualname == "Client.send")
    assert "errors #" in send.why  # its message searched as the phrases it is written in
    assert answer.shape == "error"  # "test suite" in passing does not make it a tests question
    assert answer.answer.startswith("`Client.send` (lib/client.py:")
    assert "writes it: `raise RuntimeError('Cannot send a request" in answer.lead


def test_ask_reads_the_code_that_writes_a_pasted_logs_message(tmp_path: Path) -> None:
    config = (
        "def validate_pos_int(val):\n"
        "    if val < 0:\n"
        '        raise ValueError("Value must be positive: %s" % val)\n'
        "    return val\n"
    )
    others = {f"srv/start_{n}.py": f"def start_{n}(c):\n    return run(c, {n})\n" for n in range(3)}
    root = _indexed(tmp_path / "srv", {"srv/config.py": config, **others})
    report = (
        "Gunicorn refuses to start after the config change:\n\n"
        "    $ gunicorn -c prod.conf.py myapp\n"
        "    Error: Value must be positive: -2\n\n"
        "Which code produces this line?"
    )
    with codecite.open_index(root, create=False) as idx:
        answer = idx.ask(report, "extractive")
    assert answer.citations[0].path == "srv/config.py"  # the code writing it leads
    assert "Value must be positive" in answer.answer.split("\n")[0]


def test_a_quoted_phrase_is_text_the_code_may_have_written(tmp_path: Path) -> None:
    """A phrase the question quotes (three words or more) is looked up as a message; a
    quoted term, an apostrophe, a quote of two words are words of the question."""
    assert read_parts("Users report 'Exception in ASGI application' in logs. Where?").messages == [
        "Exception in ASGI application"
    ]
    curly = read_parts("Where does \u201cInvalid HTTP request received.\u201d come from?")
    assert curly.quoted == ("Invalid HTTP request received.",)
    assert not read_parts("Let's see: don't the 'trusted hosts' and \"auto\" apply?").quoted
    many = " ".join(f"'quoted phrase number {n}'" for n in range(30))
    assert len(read_parts(many).quoted) == 12  # bounded, as a pasted log's messages are
    server = (
        "def run_asgi(app, scope, logger):\n"
        "    try:\n"
        "        app(scope)\n"
        "    except Exception as exc:\n"
        '        logger.error("Exception in ASGI application", exc_info=exc)\n'
        "        return 500\n"
    )
    others = {
        f"srv/app_{n}.py": f'def handle_{n}(scope):\n    """Handle an application scope."""\n'
        f"    return scope.get('app', {n})\n"
        for n in range(4)
    }
    root = _indexed(tmp_path / "srv", {"srv/server.py": server, **others})
    question = "Users report 'Exception in ASGI application' in the logs. What does the client get?"
    with codecite.open_index(root, create=False) as idx:
        answer = idx.ask(question, "extractive")
    assert answer.lead.startswith("`run_asgi` (srv/server.py:")
    assert 'writes it: `logger.error("Exception in ASGI application"' in answer.lead
    assert answer.confidence == "high" and not answer.insufficient


def test_a_quoted_error_is_written_by_the_code_not_the_docs_quoting_it(tmp_path: Path) -> None:
    """An error quoted in a sentence ("RuntimeError: Working outside of ...") is an
    error: its text after the type is what the code wrote. Of the places writing it,
    the code's leads, before a doc page that quotes the whole error."""
    parts = read_parts('Why do I get "RuntimeError: Working outside of application context"?')
    assert parts.errors == ("RuntimeError: Working outside of application context",)
    assert parts.messages[0] == "Working outside of application context"
    assert not read_parts('Why does "Error handling: the basics" say so?').errors  # no type
    code = (
        '"""Proxies to the current application."""\n\n'
        '_no_app_msg = """\\\nWorking outside of application context.\n\n'
        "Attempted to use functionality that expected a current application.\\\n"
        '"""\ncurrent_app = LocalProxy(_cv_app, unbound_message=_no_app_msg)\n'
    )
    docs = (
        "# The application context\n\n"
        "Using the app outside of an application context fails with this error:\n\n"
        "    RuntimeError: Working outside of application context.\n\n"
        "Push an application context with `app.app_context()` to fix the application "
        "context error.\n"
    )
    root = _indexed(tmp_path / "web", {"web/globals.py": code, "docs/appcontext.md": docs})
    with codecite.open_index(root, create=False) as idx:
        answer = idx.ask(
            'Why do I get "RuntimeError: Working outside of application context"?', "extractive"
        )
    assert answer.lead.startswith("`web.globals` (web/globals.py:"), answer.lead
    assert "writes it: `Working outside of application context.`" in answer.lead
    # whichever search ranked first: the code writing it goes before the docs
    from codecite.answer.compose import _message_first
    from codecite.question.terms import question_terms
    from codecite.retrieve.types import Hit

    with codecite.open_index(root, create=False) as idx:
        chunks = {c.path: c for c in idx.store.chunks()}
    hits = [Hit(chunks[p], 1.0, "keyword") for p in ("docs/appcontext.md", "web/globals.py")]
    terms = question_terms("", lambda t: 0, 1)
    lines = lambda path: (root / path).read_text().splitlines()  # noqa: E731
    first, _ = _message_first(hits, lines, terms, parts.messages)
    assert first.chunk.path == "web/globals.py"


def test_a_reports_static_search_embeds_its_title(shop: Path) -> None:
    with codecite.open_index(shop, create=False) as idx:
        searcher = idx.answerer.searcher
        plan = searcher._report_lists(read(REPORT), None, True)
    assert plan.static_text == REPORT.strip().splitlines()[0]
    assert plan.text != plan.static_text  # the model tier reads the whole prose


def test_inline_code_spans_of_any_backtick_run_are_identifiers() -> None:
    # reStructuredText and Markdown write ``Name`` too: the text between two spans is
    # not an identifier, nor is a fenced block
    from codecite.question.kinds import analyse

    info = analyse(
        "``MultiBlock``.plot does not work when using ``PointSet`` or `to_json_dict`\n\n"
        "```python\nblocks = pv.MultiBlock()\n```\n"
    )
    assert info.identifiers[:3] == ("MultiBlock", "PointSet", "to_json_dict")
    assert not any(" " in i or "\n" in i for i in info.identifiers)


def test_a_name_written_as_a_call_is_an_identifier() -> None:
    """``crontab()`` is code though a plain word; a call in backticks is looked up by
    its name; "file(s)" and "HTTP(S)" are prose; a report's pasted calls are not names."""
    from codecite.question.kinds import analyse

    assert analyse("How does crontab() parse '*/5'?").identifiers == ("crontab",)
    assert analyse("What does `app.use(fn)` return?").identifiers == ("app.use",)
    assert analyse("Does `settle()` reject?").identifiers == ("settle",)
    assert analyse("Which file(s) handle HTTP(S) proxies?").identifiers == ()
    assert analyse("How does Result.get(blocking=True) wait?").identifiers == ("Result.get",)
    assert analyse("print(x) fails\n\nprint(x)", "print(x) fails").identifiers == ()


def test_a_long_class_cut_into_parts_is_one_definition_to_look_up(tmp_path: Path) -> None:
    # A class long enough to be cut into many chunks is still one definition: a bug
    # report naming it gets its exact look-up (it was counted as one definition per
    # part and dropped as "defined everywhere").
    from codecite.retrieve.parts import MAX_DEFINITIONS, count_definitions, specific_identifiers

    fields = "".join(f"    field_{i}: int = {i}\n" for i in range(400))
    methods = "".join(
        f"    def method_{i}(self, value):\n        return value + {i}\n\n" for i in range(5)
    )
    root = _indexed(
        tmp_path / "blocks",
        {
            "pkg/composite.py": f'class MultiBlock:\n    """Blocks."""\n\n{fields}\n{methods}',
            "pkg/other.py": "def plot(blocks):\n    return blocks\n",
        },
    )
    with codecite.open_index(root, create=False) as idx:
        store = idx.store
        parts = store.find_symbols("MultiBlock", "name", None, 100)
        assert len(parts) > MAX_DEFINITIONS  # the class is cut into many chunks
        assert count_definitions(store, "MultiBlock", None) == 1
        assert specific_identifiers(store, ("MultiBlock",), None, 5) == ("MultiBlock",)


@pytest.mark.parametrize(
    ("text", "kind", "held"),
    [
        ("What happens when the timeout is reached?", "what-happens", {"timeout", "reach"}),
        ("How does the timeout work?", "how", {"timeout"}),
        ("Where is the time limit enforced?", "where", {"time", "limit", "enforc"}),
        ("Is there a limit on uploads?", "quantity", {"limit", "upload"}),
        ("How are permissions checked?", "who", {"permiss", "check"}),
        ("Who is authorized to delete a job?", "who", {"authoriz", "delet", "job"}),
        # a header named Authorization is a header: what happens to it
        (
            "What happens to the Authorization header on a redirect?",
            "what-happens",
            {"authoriz", "head", "redirect"},
        ),
        ("What is the default timeout?", "quantity", {"timeout"}),
    ],
)
def test_words_that_make_a_kind_and_name_the_subject_stay_in_it(
    text: str, kind: str, held: set[str]
) -> None:
    """The words that say what kind of answer is wanted ("what is the default") are no
    evidence and leave the subject; a word that makes the
    kind but names the thing asked about ("timeout", "permissions") stays: the answer's
    terms, its quote and its model read it."""
    asked = read(text)
    assert asked.kind.name == kind
    assert set(asked.terms(lambda _: 1, 100).stems) == held


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("What breaks if I change respond?", ("respond",)),
        ("Who calls serve?", ("serve",)),
        ("What would break if I changed how Context.invoke calls a callback?", ("Context.invoke",)),
        ("What would break if I changed how respond handles HEAD requests?", ("respond",)),
        ("What breaks if I change how errors are logged?", ()),
        ("If I change it, what breaks?", ()),
    ],
)
def test_the_name_an_impact_question_changes_is_looked_up_as_a_symbol(
    text: str, names: tuple[str, ...]
) -> None:
    """An impact question names what it changes even as a plain word ("if I change
    respond", "if I changed how respond handles ...", "who calls serve"): that word is an
    identifier for the exact symbol lookup (an article is none, nor the subject of "how
    errors are logged")."""
    assert read(text).identifiers == names


def test_a_word_and_its_forms_share_a_stem() -> None:
    """The forms of one word meet (a verb in -ate and its noun in -ation, a word ending
    in -ss or -us and its plural); words that only look alike do not."""
    from codecite.question.terms import stem

    for forms in (
        ("compress", "compressed", "compresses", "compression"),
        ("validate", "validated", "validating", "validation"),
        ("authenticate", "authentication"),
        ("status", "statuses"),
        ("process", "processes", "processing"),
        ("repeat", "repeating"),
    ):
        assert len({stem(w) for w in forms}) == 1, forms
    assert stem("format") != stem("form") and stem("state") != stem("st")
