"""Evidence-first answers (issue 20): the question's shape, the line that answers, the
lead sentence built from it, one citation per block, calibrated abstention, and the
LLM prompt leading with the same evidence. On a small real repository (real
tree-sitter, the real SQLite store, keyword and static tiers: no model vectors, as an
index is in its first seconds)."""

from __future__ import annotations

import numpy as np
import pytest
from repos import make_git_repo

import codecite
from codecite.answer.citations import parse_citations
from codecite.answer.shape import question_shape
from codecite.answer.terms import specific_terms, stem
from codecite.retrieve.question import read_question

APP = {
    "webapp/sessions.py": (
        '"""Signed-cookie sessions."""\n'
        "from datetime import timedelta\n\n"
        "#: How long a login session stays valid without activity.\n"
        "SESSION_LIFETIME = timedelta(days=31)\n\n\n"
        "class SessionStore:\n"
        '    """Keeps the signed session cookie of each visitor."""\n\n'
        "    def __init__(self, secret: str, max_age: int = 14 * 24 * 60 * 60) -> None:\n"
        "        self.secret = secret\n"
        "        self.max_age = max_age\n\n"
        "    def cookie_header(self, value: str) -> str:\n"
        '        """The Set-Cookie header of a session."""\n'
        '        return f"session={value}; Max-Age={self.max_age}; HttpOnly"\n'
    ),
    "webapp/uploads.py": (
        '"""Multipart uploads."""\n\n\n'
        "class UploadError(Exception):\n"
        '    """An upload the server refuses."""\n\n\n'
        "def parse_files(parts: list[bytes], max_files: int = 1000) -> list[bytes]:\n"
        '    """The uploaded files of a form."""\n'
        "    files = []\n"
        "    for part in parts:\n"
        "        files.append(part)\n"
        "        if len(files) > max_files:\n"
        '            raise UploadError(f"Too many files. Maximum number of files is {max_files}.")\n'  # noqa: E501
        "    return files\n\n\n"
        "def handle_form(parts: list[bytes]) -> tuple[int, str]:\n"
        '    """Status and body of the response to a form post."""\n'
        "    try:\n"
        "        parse_files(parts)\n"
        "    except UploadError as exc:\n"
        "        return 400, str(exc)\n"
        '    return 200, "ok"\n'
    ),
    "tests/test_uploads.py": (
        "from webapp.uploads import handle_form, parse_files\n\n\n"
        "def test_too_many_files_are_refused():\n"
        '    status, body = handle_form([b"x"] * 1001)\n'
        '    assert body == "Too many files. Maximum number of files is 1000."\n\n\n'
        "def test_a_few_files_pass():\n"
        '    assert parse_files([b"a", b"b"]) == [b"a", b"b"]\n'
    ),
}


def ask_in(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, str], question: str
) -> codecite.Answer:
    """The extractive answer to ``question`` on a new repository of ``files``."""
    repo = make_git_repo(tmp_path_factory.mktemp("repo") / "app", files)
    with codecite.open_index(repo) as idx:
        idx.update(embed=False)
        return idx.ask(question, "extractive")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    repo = make_git_repo(tmp_path_factory.mktemp("evidence") / "app", APP)
    idx = codecite.open_index(repo)
    idx.update(embed=False)
    yield idx
    idx.close()


@pytest.mark.parametrize(
    ("question", "kind", "polar"),
    [
        ("How long does a login session stay valid?", "quantity", False),
        ("Is there a limit on how many files one form can upload?", "quantity", True),
        ("Does it support gzip compression of responses?", "yesno", True),
        ("Do we collect usage analytics every time someone runs a command?", "yesno", True),
        ("Where are the usages of Context.invoke?", "impact", False),
        ("What happens when someone uploads too many files?", "what-happens", False),
        ("Where is the session cookie written?", "where", False),
        ("How does the upload parser split a form?", "how", False),
        ("What breaks if I change parse_files?", "impact", False),
        ("Which tests cover the upload limits?", "tests", False),
        ("Who can delete another user's project?", "who", False),
        # "broken" describing the input is no question of what breaks
        ("What does a visitor get if a link has broken percent-encoding?", "what-happens", False),
        ("What does a user see when they forget a required option?", "what-happens", False),
        # a unit word alone names the subject: the question asks where or how
        ("Where is a job's time limit enforced while it runs?", "where", False),
        ("How is an invalid job ttl reported when enqueueing?", "how", False),
        ("Is there a cap on how many handlers one route can have?", "quantity", True),
        ("Where are jobs serialized, and what format is used by default?", "where", False),
        # the apostrophes of "don't ... it's" quote no message
        (
            "If we don't say anything, how long may a job run before it's stopped?",
            "quantity",
            False,
        ),
        ("why do I get 'Too many files. Maximum number of files is 1000.'", "error", False),
        # the longest, a status code asked for by "which": quantities
        ("What's the longest URL a client can send before getting an error?", "quantity", False),
        ("When we redirect, which status code is sent?", "quantity", False),
        ("On a very wide terminal, how wide can the help screen get?", "quantity", False),
        ("Who is trusted to say that a request came in over HTTPS?", "who", False),
        ("Whose forwarded client-IP headers do we trust out of the box?", "who", False),
        # a job depending on another job is the domain's, not code depending on code
        ("If a job depends on another job and it fails, does the dependent job run?", "how", False),
        ("If I rewrite the cookie parser, which features depend on it?", "impact", False),
    ],
)
def test_question_shapes(question: str, kind: str, polar: bool) -> None:
    shape = question_shape(question)
    assert (shape.kind, shape.polar) == (kind, polar)


def test_a_shape_words_are_not_the_subject() -> None:
    assert question_shape("How many worker processes run by default?").subject == (
        "worker",
        "processes",
        "run",
    )
    # "too many files" keeps "many" and "files": they are what it is about
    assert set(question_shape("What happens if I upload too many files?").subject) >= {
        "many",
        "files",
    }


def test_a_bug_report_is_an_error_question() -> None:
    report = (
        "The upload endpoint returns 400 for a big batch:\n\n"
        "Traceback (most recent call last):\n"
        '  File "webapp/uploads.py", line 15, in parse_files\n'
        "UploadError: Too many files. Maximum number of files is 1000.\n" + "word " * 60
    )
    assert question_shape(report, read_question(report)).kind == "error"


def test_names_and_stems() -> None:
    names = specific_terms("Do we store credentials in the OS keychain or in Celery for VIP users?")
    assert names == {"keychain": True, "celery": True, "vip": False}
    assert specific_terms("How long does a login session stay valid?") == {}
    assert stem("files") == stem("file") and stem("loyalty") == stem("loyal")
    assert stem("compression") == stem("compressed")


def test_quantity_leads_with_the_value_and_what_it_comes_to(index: codecite.Index) -> None:
    answer = index.ask("How long does a login session stay valid?", "extractive")
    assert not answer.insufficient and answer.shape == "quantity"
    assert answer.lead.startswith("**31 days** by default: `SESSION_LIFETIME = timedelta(days=31)`")
    assert "(webapp/sessions.py:5)" in answer.lead
    first = parse_citations(answer.lead)[0]
    assert first[:3] == ("webapp/sessions.py", 5, 5)
    # (asked as "how many seconds is the session cookie kept" it is a near tie with the
    # 31-day session lifetime above, which the lines' meaning tips that way)
    cookie = index.ask("What max age does the session store give the signed cookie?", "extractive")
    assert "**14 days (1,209,600 seconds)** by default: `max_age = 14 * 24 * 60 * 60`" in (
        cookie.lead
    )


def test_what_happens_leads_with_the_raise_and_the_code_that_catches_it(
    index: codecite.Index,
) -> None:
    answer = index.ask("What happens when someone uploads too many files?", "extractive")
    assert answer.lead.startswith(
        '`parse_files` raises `UploadError(f"Too many files. Maximum number of files is '
        '{max_files}.")` when `len(files) > max_files` (webapp/uploads.py:13-14)'
    )
    assert "`handle_form` catches it: `return 400, str(exc)`" in answer.lead
    # tests last: the code itself comes before the test that asserts the message
    paths = [b.path for b in answer.blocks]
    assert paths[0] == "webapp/uploads.py"
    assert "tests/test_uploads.py" not in paths or paths.index("tests/test_uploads.py") > 0


def test_one_citation_per_block_and_each_block_verified(index: codecite.Index) -> None:
    answer = index.ask("What happens when someone uploads too many files?", "extractive")
    data = answer.to_json()
    assert data["confidence"] in ("high", "medium", "low") and data["shape"] == "what-happens"
    assert data["lead"] and data["blocks"]
    written = [c[3] for c in parse_citations(answer.answer)]
    for block in data["blocks"]:
        assert block["citation"] in written  # each block cited once, in the text
        assert block["verified"] is True
        first = block["shown_start_line"]
        assert block["start_line"] <= first <= block["end_line"]
        assert len(block["lines"]) >= 1
    # a citation inside code shown in a block is never read as a claim
    assert all(not c.text.startswith("webapp/uploads.py:0") for c in answer.citations)


def test_a_literal_message_is_never_declined(index: codecite.Index) -> None:
    answer = index.ask(
        "why do I get 'Too many files. Maximum number of files is 1000.'", "extractive"
    )
    assert not answer.insufficient and answer.confidence == "high"
    assert answer.signals["literal"] is True
    assert parse_citations(answer.lead)[0][:3] == ("webapp/uploads.py", 13, 14)  # + its branch


def test_a_question_about_something_the_code_lacks_is_declined(index: codecite.Index) -> None:
    for question in (
        "Do we store credentials in the OS keychain?",
        "Do we send push notifications through Firebase?",
        "How much does the enterprise plan cost per seat?",
    ):
        answer = index.ask(question, "extractive")
        assert answer.insufficient and answer.confidence == "none", question
        assert answer.citations == [] and answer.blocks == []
        assert "No indexed code mentions" in answer.answer
    keychain = index.ask("Do we store credentials in the OS keychain?", "extractive")
    assert "“keychain”" in keychain.answer


def test_the_prompt_leads_with_the_evidence_and_asks_for_the_shape(
    index: codecite.Index,
) -> None:
    from codecite.answer.prompt import build_messages

    question = "What happens when someone uploads too many files?"
    draft = index.answerer.prepare(question)
    assert draft.messages is None  # extractive: answered at once
    answer = draft.answer
    messages = build_messages(question, answer.sources, answer.intent, answer.evidence, None)
    user = messages[1]["content"]
    assert user.index("<context>") < user.index("Lines most likely to answer") < user.index("[1] ")
    assert "[E1] webapp/uploads.py:13-14 — parse_files: " in user
    shaped = build_messages(
        question,
        answer.sources,
        answer.intent,
        answer.evidence,
        question_shape(question),
    )[1]["content"]
    assert "Start with what the code does in that case" in shaped


def test_a_yes_no_question_whose_phrases_no_code_holds_is_declined(
    index: codecite.Index,
) -> None:
    # "visitor" and "upload" are in the code, never side by side; "receipt" is not
    answer = index.ask("Do visitors get a receipt for each upload?", "extractive")
    assert answer.signals["phrases"] == 0 and answer.signals["best_chunk"] < 0.5
    assert answer.insufficient and answer.confidence == "none"
    held = index.ask("Is the session cookie sent HttpOnly?", "extractive")
    assert held.signals["phrases"] > 0 and not held.insufficient
    assert held.citations[0].path == "webapp/sessions.py"


def test_a_sentence_ends_at_its_end_not_at_a_dotted_name() -> None:
    from codecite.answer.evidence import sentence_spans

    text = (
        "Values are redacted when they look generated (:func:`~codecite.scrub.rules.is_random_run`:"
        " mixed letters and digits), e.g. a password. Python 3.11 reads app.py too! Last"
    )
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Values are redacted when they look generated (:func:`~codecite.scrub.rules.is_random_run`:"
        " mixed letters and digits), e.g. a password.",
        "Python 3.11 reads app.py too!",
        "Last",
    ]


def test_irregular_forms_and_derived_nouns_stem_like_the_code() -> None:
    # "how long are results kept" ~ keep; "a failed job" ~ DEFAULT_FAILURE_TTL
    assert stem("kept") == stem("keep") and stem("sent") == stem("send")
    assert stem("failure") == stem("failed") == stem("fail")
    assert stem("secure") == stem("security")  # unchanged by the irregular forms


def test_an_example_value_in_a_question_is_not_a_name_the_code_must_hold() -> None:
    assert (
        specific_terms("How does the parser deal with a bundle of short flags such as -xvf?") == {}
    )
    assert "kubernetes" not in specific_terms("Do we ship a Helm chart, e.g. Kubernetes manifests?")
    assert "keychain" in specific_terms("Do we use the keychain, such as on macOS?")
    assert specific_terms("What do we answer to a path like /files/%E0%A4%A?") == {}


def test_pasted_console_output_is_read_as_a_report() -> None:
    pasted = (
        "After the host rebooted it won't come back up:\n\n"
        "$ gunicorn -b 127.0.0.1:8000 -p /tmp/app.pid myapp\n"
        "[2026-12-01 22:45:40 +0000] [14737] [INFO] Starting gunicorn 23.0.0\n\n"
        "Error: Already running on PID 1 (or pid file '/tmp/app.pid' is stale)\n"
    )
    assert read_question(pasted).long
    # one line that merely mentions an error is still a question
    assert not read_question("Error: what does 'Too many files' mean here?").long


def test_a_file_name_in_a_question_is_not_a_symbol_it_names(index: codecite.Index) -> None:
    # "index.html": no symbol "html" makes the question literal (and so never declined)
    answer = index.ask(
        "Which Jinja macros render the receipt page at /receipt/index.html?", "extractive"
    )
    assert answer.signals["literal"] is False
    assert answer.insufficient and answer.confidence == "none"


def test_a_yes_no_question_partly_about_what_no_code_holds_is_declined(
    index: codecite.Index,
) -> None:
    # "encrypted" and "stored" are nowhere in the code; "uploads" alone is found
    answer = index.ask("Are uploads encrypted before they are stored?", "extractive")
    assert answer.signals["best_chunk"] < 0.6 and answer.signals["absent"] >= 0.2
    assert answer.insufficient and answer.confidence == "none"


def test_evidence_lines_are_weighed_by_their_meaning(index: codecite.Index) -> None:
    answer = index.ask("What happens when someone uploads too many files?", "extractive")
    closeness = [ev.features["line_sim"] for ev in answer.evidence if ev.features]
    assert all(0.0 <= c <= 1.0 for c in closeness) and max(closeness) > 0.5


def test_a_quantity_question_is_bridged_to_where_its_default_is_set(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "jobs/defaults.py": (
            "DEFAULT_RESULT_TTL = 500\n"
            '"""Seconds that the results of a finished job are kept."""\n\n'
            "DEFAULT_WORKER_TTL = 420\n"
        ),
        "jobs/worker.py": (
            "def finish(job, result):\n"
            '    """Store the result of a job and mark the job finished."""\n'
            "    job.result = result\n"
            "    job.finished = True\n"
        ),
        "docs/results.md": (
            "# Results\n\nResults of jobs are kept for a while (see DEFAULT_RESULT_TTL).\n"
        ),
    }
    repo = make_git_repo(tmp_path_factory.mktemp("settings") / "app", files)
    with codecite.open_index(repo) as idx:
        idx.update(embed=False)
        question = "How long are a job's results kept after it finishes?"
        shape = question_shape(question)
        _, sought = idx.answerer.term_weights(question, read_question(question), shape)
        ids = idx.answerer.context._settings(question, shape, None, sought)
        chunks = idx.answerer.searcher.store.get_chunks(ids)
        # code, not the documentation section in the asker's words
        paths = [chunks[i].path for i in ids]
        assert "jobs/defaults.py" in paths and "docs/results.md" not in paths
        answer = idx.ask(question, "extractive")
        assert answer.lead.startswith("**500 seconds** by default: `DEFAULT_RESULT_TTL = 500`")


def test_a_tests_question_leads_with_the_tests_found_for_its_words(
    index: codecite.Index,
) -> None:
    answer = index.ask("Which tests check that too many files are refused?", "extractive")
    assert answer.shape == "tests"
    assert answer.lead.startswith(
        "Tests that check it: `test_too_many_files_are_refused` (tests/test_uploads.py:4-6)"
    )
    assert "tests.test_uploads`" not in answer.lead  # its imports test nothing
    assert answer.blocks[0].path == "tests/test_uploads.py" and answer.blocks[0].role == "test"


def test_a_line_holds_a_question_word_in_meaning_not_only_in_spelling(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "web/middleware.py": (
            "class GZipMiddleware:\n"
            '    """Wraps an application."""\n\n'
            "    def __init__(self, app, minimum_size=500):\n"
            "        self.app = app\n"
            "        self.minimum_size = minimum_size\n\n"
            "    def encode(self, body):\n"
            "        return gzip.compress(body) if len(body) >= self.minimum_size else body\n"
        ),
    }
    repo = make_git_repo(tmp_path_factory.mktemp("soft") / "app", files)
    with codecite.open_index(repo) as idx:
        idx.update(embed=False)
        answer = idx.ask("How big must a body be before we shrink it?", "extractive")
        soft = {ev.focus: ev.features.get("soft_own", 0.0) for ev in answer.evidence}
        assert soft and max(soft.values()) > 0  # "shrink" ~ compress, "body" ~ size, ...
        assert all(0.0 <= v <= 1.0 for v in soft.values())


def test_static_vectors_of_texts_are_kept_between_answers() -> None:
    from codecite.answer.answerer import line_embedder

    embed = line_embedder()
    assert embed is not None and line_embedder() is embed  # one per model
    first = embed(["def encode(self, body):", "gzip", "def encode(self, body):"])
    again = embed(["gzip", "def encode(self, body):"])
    np.testing.assert_array_equal(first[1], again[0])
    np.testing.assert_array_equal(first[0], first[2])
    assert embed([]).shape[0] == 0


def test_a_settings_class_default_counts_as_the_default_of_its_unit(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # ``default = 30`` in ``class Timeout`` is the timeout's default; the worker's own
    # ``timeout = self.timeout or 0.5`` is a fallback of a loop, no setting
    files = {
        "server/config.py": (
            "class Setting:\n"
            '    """One setting of the server."""\n\n'
            "    default = None\n\n\n"
            "class Timeout(Setting):\n"
            '    """Workers silent for more than this many seconds are killed and restarted."""\n\n'
            "    name = 'timeout'\n"
            "    default = 30\n"
        ),
        "server/worker.py": (
            "class Worker:\n"
            '    """Handles requests until it is told to stop."""\n\n'
            "    def run(self) -> None:\n"
            '        """Wait for requests, at most the timeout at a time."""\n'
            "        timeout = self.timeout or 0.5\n"
            "        while self.alive:\n"
            "            self.wait(timeout)\n"
        ),
    }
    answer = ask_in(
        tmp_path_factory, files, "How long can a request take before its worker is killed?"
    )
    default = next(ev for ev in answer.evidence if ev.focus_text == "default = 30")
    assert default.features.get("q_default") == 1.0
    fallback = next(ev for ev in answer.evidence if ev.focus_text.startswith("timeout ="))
    assert not fallback.features.get("q_default")  # ``timeout`` names no default
    assert answer.evidence.index(default) <= 1


def test_an_exit_code_is_a_quantity_and_no_duration(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # the question finds BadOptionUsage by its words; its number is UsageError's
    files = {
        "cli/base.py": (
            "class UsageError(Exception):\n"
            '    """The tool was used wrongly: its usage is shown."""\n\n'
            "    exit_code = 2\n"
        ),
        "cli/exceptions.py": (
            "from .base import UsageError\n\n\n"
            "class BadOptionUsage(UsageError):\n"
            '    """Raised if an option is supplied but the use of the option was wrong."""\n\n'
            "    def __init__(self, option_name: str, message: str) -> None:\n"
            "        super().__init__(message)\n"
            "        self.option_name = option_name\n"
        ),
    }
    question = "What exit code does the tool give when the option use was wrong?"
    assert question_shape(question).kind == "quantity"
    answer = ask_in(tmp_path_factory, files, question)
    assert answer.lead.startswith("**2** by default: `exit_code = 2` in `UsageError`")  # no unit
    assert (answer.citations[0].path, answer.citations[0].start_line) == ("cli/base.py", 4)
    # (in a repository this small UsageError is found by its own words; on click 8.1.8 it is
    # not, and only the inherits bridge brings it: answer benchmark click-pm-06)


def test_the_line_whose_literals_hold_the_quoted_values_leads(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "cli/types.py": (
            "class BoolType:\n"
            '    """A yes/no setting."""\n\n'
            "    def convert(self, value: str) -> bool:\n"
            '        """The setting\'s value as a bool."""\n'
            "        norm = value.strip().lower()\n"
            '        if norm in {"1", "true", "yes", "y", "on"}:\n'
            "            return True\n"
            '        if norm in {"0", "false", "no", "n", "off"}:\n'
            "            return False\n"
            '        raise ValueError(f"{value!r} is not a valid yes/no setting")\n'
        ),
        "cli/prompts.py": (
            "def confirm(text: str) -> bool:\n"
            '    """Ask a yes/no question: "on" and "off" are no answers here."""\n'
            "    answer = input(text)\n"
            '    if answer in ("y", "yes"):\n'
            "        return True\n"
            "    return False\n"
        ),
    }
    question = "Will a yes/no setting accept values like 'on', 'off', 'y' or '1'?"
    answer = ask_in(tmp_path_factory, files, question)
    lead = answer.evidence[0]
    assert lead.path == "cli/types.py" and '"on"' in lead.focus_text
    assert lead.features["q_values"] == 0.75  # 'on', 'y', '1' of the four
    docs = [ev for ev in answer.evidence if ev.role == "doc"]
    assert all(not ev.features.get("q_values") for ev in docs)  # prose holds no literal


def test_a_lead_in_a_class_outline_names_the_field_its_line_documents() -> None:
    from codecite.answer.evidence import _member

    lines = list(
        enumerate(
            [
                "class App:",
                "    #: A timedelta used for the expiry of a permanent session.",
                "    #: Defaults to 31 days.",
                "    permanent_session_lifetime = ConfigAttribute[timedelta](",
                '        "PERMANENT_SESSION_LIFETIME",',
                "    )",
                "    def run(self) -> None: ...",
                "    public int limit = 5;",
            ],
            start=10,
        )
    )
    assert _member(lines, 1) == "permanent_session_lifetime"  # the comment above it
    assert _member(lines, 3) == "permanent_session_lifetime"  # the assignment itself
    assert _member(lines, 6) == ""  # a method is no field
    assert _member(lines, 7) == "limit"
    assert _member(lines, 0) == ""  # the class line: deeper lines follow


def test_a_quantity_reads_the_sentence_of_its_line_that_states_the_number() -> None:
    from codecite.answer.evidence import _sentence_at

    block = [
        (218, "    #: A timedelta which is used to set the expiration"),
        (219, "    #: date of a permanent session.  The default is 31 days which makes a"),
        (220, "    #: permanent session survive for roughly one month."),
    ]
    assert _sentence_at(block, 1) == (
        "A timedelta which is used to set the expiration date of a permanent session."
    )
    days = question_shape("How long does a permanent session last?").units
    assert _sentence_at(block, 1, days) == (
        "The default is 31 days which makes a permanent session survive for roughly one month."
    )
    assert _sentence_at(block, 0, days).startswith("A timedelta")  # none on its line
    size = [
        (94, '"""The maximum size in bytes any non-file form field may be in a'),
        (95, "``multipart/form-data`` body. If this limit is exceeded, a 413"),
        (96, ':exc:`~werkzeug.exceptions.RequestEntityTooLarge` error is raised."""'),
    ]
    bytes_ = question_shape("What is the maximum size of an upload?").units
    assert _sentence_at(size, 1, bytes_).startswith("The maximum size in bytes")  # no 413


def test_a_quantity_leads_with_the_default_named_for_its_unit(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "jobs/defaults.py": (
            "#: Seconds a job may run.\n"
            "DEFAULT_JOB_TIMEOUT = 180\n"
            "#: Results a job keeps.\n"
            "DEFAULT_RESULTS_KEPT = 10\n"
            "#: The queue's name.\n"
            "DEFAULT_QUEUE_NAME = 'default'\n"
            "#: Seconds a worker's key lives after its last heartbeat.\n"
            "DEFAULT_WORKER_TTL = 420\n"
        ),
        "jobs/worker.py": (
            "from .defaults import DEFAULT_WORKER_TTL\n\n\n"
            "class Worker:\n"
            '    """Runs jobs; sends heartbeats while it is alive."""\n\n'
            "    def __init__(\n"
            "        self,\n"
            "        name: str,\n"
            "        worker_ttl: int | None = None,  # TODO remove this arg in 3.0\n"
            "    ) -> None:\n"
            "        self.name = name\n"
            "        self.worker_ttl = worker_ttl or DEFAULT_WORKER_TTL\n"
        ),
    }
    answer = ask_in(
        tmp_path_factory, files, "How long does a worker live after its last heartbeat?"
    )
    lead = answer.evidence[0]
    assert lead.focus_text == "DEFAULT_WORKER_TTL = 420"
    assert lead.features.get("q_default") == 1.0
    # a version in a comment is no quantity: the TODO line is not evidence of one
    assert not any("TODO" in ev.focus_text for ev in answer.evidence[:3])
    assert answer.citations[0].path == "jobs/defaults.py"
    assert answer.citations[0].start_line <= 8 <= answer.citations[0].end_line


def test_evidence_next_to_a_better_block_joins_it() -> None:
    from codecite.answer.extractive import AnswerBlock, _merged

    lines = [f"line {n}" for n in range(1, 41)]

    def block(first: int, last: int, focus: int) -> AnswerBlock:
        return AnswerBlock(
            "app/parser.py", first, last, "Parser", "python", tuple(lines[first - 1 : last]),
            "value", "class", shown_start=first, focus_start=focus, focus_end=focus,
        )  # fmt: skip

    kept, other = block(10, 19, 14), block(5, 14, 6)
    merged = _merged(kept, other)
    assert (merged.start_line, merged.end_line, merged.first_shown) == (5, 19, 5)
    assert merged.lines == tuple(lines[4:19]) and merged.focus_start == 14  # the lead's focus
    assert _merged(kept, block(12, 18, 15)) is kept  # its evidence is shown already
    assert _merged(kept, block(1, 12, 2)) is kept  # together too long to read as one


@pytest.mark.parametrize(
    ("line", "role"),
    [
        ("var query = require('./middleware/query');", "import"),
        ("const { Router } = require('express')", "import"),
        ("from .defaults import DEFAULT_WORKER_TTL", "import"),
        ("var query = parse(req.url);", "value"),
        ("    raise TypeError('default is not supported')", "raise"),
    ],
)
def test_line_roles(line: str, role: str) -> None:
    from codecite.answer.evidence import line_role
    from codecite.types import Chunk

    chunk = Chunk("c", "r", "lib/app.js", "javascript", "module", "app", "app", 1, 1, line, "", "h")
    assert line_role(line, chunk) == role


def test_a_long_test_is_cited_from_its_name(tmp_path_factory: pytest.TempPathFactory) -> None:
    filler = "".join(f"    assert parse_port('{8000 + n}') == {8000 + n}\n" for n in range(70))
    files = {
        "net/ports.py": (
            "def parse_port(text: str) -> int:\n"
            '    """A TCP port from its text."""\n'
            "    port = int(text)\n"
            "    if not 0 < port < 65536:\n"
            '        raise ValueError("port out of range")\n'
            "    return port\n"
        ),
        "tests/test_ports.py": (
            "import pytest\n\nfrom net.ports import parse_port\n\n\n"
            "def test_parse_port():\n"
            f"{filler}"
            "    with pytest.raises(ValueError):\n"
            "        parse_port('70000')  # out of range ports are refused\n"
        ),
    }
    answer = ask_in(
        tmp_path_factory, files, "Which tests check that out of range ports are refused?"
    )
    lead = "Tests that check it: `test_parse_port` (tests/test_ports.py:6-"
    assert answer.answer.startswith(lead)
    first = answer.citations[0]
    assert (first.path, first.start_line) == ("tests/test_ports.py", 6) and first.end_line >= 77


def test_the_innermost_frame_of_a_traceback_weighs_most(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "shop/checkout.py": (
            "from .prices import price_of\n\n\n"
            "def checkout_total(cart):\n"
            '    """The checkout total of a cart: each item priced, summed."""\n'
            "    return sum(price_of(item) for item in cart.items)\n"
        ),
        "shop/prices.py": (
            "PRICES = {}\n\n\ndef price_of(item):\n    return PRICES[item.sku] * item.quantity\n"
        ),
    }
    report = (
        "Checkout total crashes for the cart at checkout:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app/shop/checkout.py", line 6, in checkout_total\n'
        "    return sum(price_of(item) for item in cart.items)\n"
        '  File "/srv/app/shop/prices.py", line 5, in price_of\n'
        "    return PRICES[item.sku] * item.quantity\n"
        "KeyError: 'sku-123'\n"
    )
    answer = ask_in(tmp_path_factory, files, report)
    framed = {
        (ev.path, ev.focus): ev.features["frame"] for ev in answer.evidence if ev.role == "frame"
    }
    assert framed[("shop/prices.py", 5)] == 1.0 > framed[("shop/checkout.py", 6)]


def test_a_docstring_quote_or_heading_is_never_evidence(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "jobs/retry.py": (
            "class Retry:\n"
            "    def __init__(self, max: int, interval: int = 0):\n"
            '        """\n'
            "        Args:\n"
            "            max: how many times a failed job is retried\n"
            '        """\n'
            "        self.max = max\n"
            "        self.interval = interval\n"
        ),
    }
    answer = ask_in(tmp_path_factory, files, "Does a failed job get retried?")
    assert answer.evidence
    assert not any(ev.focus_text in ('"""', "Args:") for ev in answer.evidence)


@pytest.mark.parametrize(
    ("line", "trivial"),
    [
        ("        self.app = app", True),
        ("    this.name = name;", True),
        ("    @t.overload", True),
        ("        self.app = wrap(app)", False),
        ("    @app.route('/users')", False),
    ],
)
def test_lines_that_say_nothing_alone(line: str, trivial: bool) -> None:
    from codecite.answer.evidence import _TRIVIAL

    assert bool(_TRIVIAL.match(line)) is trivial


def test_a_doc_comment_summary_stops_at_its_paragraph() -> None:
    from codecite.answer.lead import first_sentence

    doc = "Returns the time a job is scheduled at\n\nArgs:\n    job_or_id: the job or its id"
    assert first_sentence(doc) == "Returns the time a job is scheduled at"
    assert first_sentence("Summary line\nReturns:\n    the value") == "Summary line"
    assert first_sentence("One sentence. Another one.") == "One sentence."


def test_a_how_answer_names_only_what_its_lead_calls(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "app/cache.py": (
            "from .store import build_cache, read_settings\n\n"
            "#: The cache is configured once at import, from the settings file.\n"
            "CACHE = build_cache(read_settings())\n"
        ),
        "app/store.py": (
            "def build_cache(settings):\n"
            '    """Build the cache that the settings configure."""\n'
            "    return make_lru(settings.cache_size)\n\n\n"
            "def read_settings():\n"
            "    return load_file('settings.toml')\n\n\n"
            "def make_lru(size):\n"
            "    return {}\n"
        ),
    }
    answer = ask_in(tmp_path_factory, files, "How is the cache configured at import?")
    lead = answer.evidence[0]
    assert lead.chunk.kind not in ("function", "method", "class")
    assert " calls `" not in answer.answer  # no callees of another definition than the lead's
    # the statement leads (its doc comment, shown above it, is not preferred to it)
    assert answer.answer.startswith("`app.cache` (app/cache.py:")
    assert "The cache is configured once at import" in answer.answer


def test_in_a_pasted_trace_the_frame_where_it_failed_leads() -> None:
    from codecite.answer.answerer import _file_first, _trace_first
    from codecite.answer.evidence import Evidence
    from codecite.retrieve.types import FileHit, SearchResult
    from codecite.types import Chunk

    trace = (
        "Home page renders a 500:\n\n"
        "Error: Cannot find module 'pug'\n"
        "    at new View (/app/node_modules/express/lib/view.js:81:14)\n"
        "    at Function.render (/app/node_modules/express/lib/application.js:587:12)\n\n"
        "Who is requiring it?"
    )
    assert _trace_first(read_question(trace))
    report = trace + "\n\n" + "We deploy with docker and the same image works in staging. " * 8
    assert not _trace_first(read_question(report))  # a bug report: its file ranking leads

    def evidence(path: str, line: int, role: str) -> Evidence:
        chunk = Chunk("c" + path, "r", path, "javascript", "function", "f", "f", 1, 99, "", "", "h")
        return Evidence(path, line, line, ("x",), line, role, 1.0, chunk, 0)

    failed, render = (
        evidence("lib/view.js", 81, "frame"),
        evidence("lib/application.js", 587, "frame"),
    )
    ranked = SearchResult("q", "locate", files=[FileHit("lib/application.js", "r", 1.0)])
    finder = None  # not reached: the ranked file's evidence is among the evidence
    assert _file_first([failed, render], ranked, finder, [], frame_leads=True)[0] is failed  # type: ignore[arg-type]
    assert _file_first([failed, render], ranked, finder, [])[0] is render  # type: ignore[arg-type]


def test_a_report_that_asks_nothing_is_led_by_its_first_file() -> None:
    """A message line of another file than search's first leads an answer to a question
    about it ("Where is this raised?"), not to an issue's text, which asks where the
    code to change is (the file ranking weighs all of the report)."""
    from codecite.answer.answerer import _asks, _file_first
    from codecite.answer.evidence import Evidence
    from codecite.retrieve.types import FileHit, SearchResult
    from codecite.types import Chunk

    report = (
        "to_json_dict still raises with suppress_invalid_tags\n"
        "Converting a dataset with a bad IS value fails although invalid tags should be "
        "skipped; moving the element lookup into the try block would fix it.\n\n"
        "Traceback:\n"
        '  File "/usr/lib/python3/dist-packages/pydicom/dataset.py", line 2495, in to_json_dict\n'
        "    data_element = self[key]\n"
        "TypeError: Could not convert value to integer without loss\n"
    )
    asked = report + "\nWhere is this raised?"
    assert not _asks(read_question(report)) and _asks(read_question(asked))

    def evidence(path: str, line: int, role: str) -> Evidence:
        chunk = Chunk("c" + path, "r", path, "python", "function", "f", "f", 1, 3000, "", "", "h")
        return Evidence(path, line, line, ("x",), line, role, 1.0, chunk, 0)

    message = evidence("pydicom/valuerep.py", 1284, "message")
    lookup = evidence("pydicom/dataset.py", 2495, "frame")
    ranked = SearchResult("q", "locate", files=[FileHit("pydicom/dataset.py", "r", 1.0)])
    finder = None  # not reached: the ranked file's evidence is among the evidence
    assert _file_first([message, lookup], ranked, finder, [], asked=True)[0] is message  # type: ignore[arg-type]
    assert _file_first([message, lookup], ranked, finder, [], asked=False)[0] is lookup  # type: ignore[arg-type]


def test_an_impact_question_is_about_the_definition_it_names(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "cli/core.py": (
            "class Context:\n"
            "    def invoke(self, callback):\n"
            "        return callback()\n\n\n"
            "class Command:\n"
            "    def run(self, ctx):\n"
            '        """Calls the callback: how a callback is called changed, it breaks here."""\n'
            "        return Context.invoke(ctx, self.callback)\n\n\n"
            "def main():\n"
            "    return Command().run(Context())\n\n\n"
            "def main_again():\n"
            "    return Command().run(Context())\n"
        ),
    }
    question = "What would break if I changed how Context.invoke calls a callback?"
    answer = ask_in(tmp_path_factory, files, question)
    assert answer.answer.startswith("Changing `Context.invoke` affects 1 caller: `Command.run`")


def test_a_polar_question_of_another_shape_is_read_as_yes_or_no(index: codecite.Index) -> None:
    # a quantity asked as yes/no: "visitor" and "upload" are in the code, never together
    asked = "Is there a limit on how many uploads a visitor can make per day?"
    assert question_shape(asked).kind == "quantity" and question_shape(asked).polar
    answer = index.ask(asked, "extractive")
    assert answer.signals["phrases"] == 0 and answer.insufficient
    held = index.ask("Is there a limit on how many files one form upload can hold?", "extractive")
    assert held.signals["phrases"] is not None and held.signals["phrases"] > 0
    assert not held.insufficient and held.citations[0].path == "webapp/uploads.py"
    # whether tests exist is not a capability: its phrases are not checked
    tested = index.ask("Is there a test for too many files in one form?", "extractive")
    assert tested.shape == "tests" and tested.signals["phrases"] is None


SERVER = {
    "server/config.py": (
        '"""Server settings."""\n\n\n'
        "class Settings:\n"
        '    """What an operator can set."""\n\n'
        "    #: Seconds a request may run before its worker is killed and restarted.\n"
        "    timeout = 30\n"
        "    #: Worker processes to start.\n"
        "    workers = 1\n"
    ),
    "server/handler.py": (
        "def handle_request(request, server):\n"
        '    """Run the application for one request and send what it returns."""\n'
        "    response = server.application(request)\n"
        "    server.send(response)\n"
        "    return response\n\n\n"
        "def handle_worker_exit(server, worker):\n"
        '    """Log that a worker handling requests exited."""\n'
        '    server.log("worker %s exited", worker)\n'
    ),
}


def test_the_code_words_for_the_askers_own_are_searched_and_cited(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from codecite.retrieve.concepts import concept_terms

    asked = "How long can one request take before the server gives up on the worker?"
    assert concept_terms(asked) == ("timeout", "timeouts")
    assert concept_terms("What breaks if I changed the handler?") == ()  # no "hang" in it
    lifetime = concept_terms("How long does a user's login session stay valid?")
    assert "lifetime" in lifetime and "expiration" in lifetime
    assert concept_terms("Is there session storage so users stay logged in?") == ()
    assert concept_terms("What does a visitor see on a missing page?")[:2] == ("client", "request")
    from codecite.retrieve.concepts import concept_matches

    # the whole phrase describes the concept: "prompt" is found where "basic auth" is
    prompt = concept_matches("Can we put a username/password prompt in front of it?")
    assert prompt[0] == (
        ("username", "password", "prompt"),
        ("basic", "auth", "realm", "authorization"),
    )
    assert "handlers" in concept_terms("Is there a cap on how many middleware steps one has?")
    assert "route" in concept_terms("Which endpoint serves the health check?")
    assert concept_terms("What does a user see when they forget a required option?") == ("missing",)
    repo = make_git_repo(tmp_path_factory.mktemp("concepts") / "app", SERVER)
    with codecite.open_index(repo) as idx:
        idx.update(embed=False)
        found = idx.search(asked, k=3)
        assert any("concepts" in h.why for h in found.hits)
        answer = idx.ask(asked, "extractive")
    assert not answer.insufficient
    assert answer.citations[0].path == "server/config.py"
    assert "timeout = 30" in answer.lead


GZIP = {
    "web/gzip.py": (
        '"""Response compression."""\n\n\n'
        "class GZipMiddleware:\n"
        '    """Gzip the body of each response the client accepts it for."""\n\n'
        "    def __init__(self, app, minimum_size: int = 500) -> None:\n"
        "        self.app = app\n"
        "        self.minimum_size = minimum_size\n\n"
        "    def wrap(self, body: bytes) -> bytes:\n"
        '        """Gzip bodies of at least ``minimum_size`` bytes; send others as they are."""\n'
        "        if len(body) < self.minimum_size:\n"
        "            return body\n"
        "        return gzip_bytes(body)\n"
    ),
    "web/shells.py": (
        "def completion_script(shell: str) -> str:\n"
        '    """The tab completion script of a shell: bash or zsh."""\n'
        '    return {"bash": "complete -F _app app", "zsh": "compdef _app app"}[shell]\n'
    ),
}


def test_the_askers_words_for_a_concept_count_where_the_codes_words_are(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    repo = make_git_repo(tmp_path_factory.mktemp("gzip") / "app", GZIP)
    with codecite.open_index(repo) as idx:
        idx.update(embed=False)
        # "bandwidth" is in no code; what it describes (compression) is: gzip
        saved = idx.ask("Do we compress responses to save bandwidth?", "extractive")
        named = idx.ask("Does tab completion work for PowerShell users?", "extractive")
    assert not saved.insufficient and saved.citations[0].path == "web/gzip.py"
    # a name is not its kind: "PowerShell" is not found in bash's and zsh's code
    assert named.insufficient and "powershell" in named.signals["missing_names"]


CORS = {
    "web/sessions.py": (
        "class SessionMiddleware:\n"
        '    """Signed cookie sessions of an app."""\n\n'
        "    def __init__(self, app, secret: str, max_age: int = 14 * 24 * 60 * 60) -> None:\n"
        "        self.app = app\n"
        "        self.secret = secret\n"
        "        self.max_age = max_age  # seconds a session cookie lasts\n"
    ),
    "web/cors.py": (
        "class CORSMiddleware:\n"
        '    """Cross-origin resource sharing for browsers."""\n\n'
        "    def __init__(self, app, allow_origins: list[str], max_age: int = 600) -> None:\n"
        "        self.app = app\n"
        "        self.allow_origins = allow_origins\n"
        '        self.preflight_headers = {"Access-Control-Max-Age": str(max_age)}\n'
    ),
}


def test_the_settings_bridge_adds_only_code_about_the_question(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecite.answer import context

    asked = "How long will browsers remember the cross-origin permission check of our app?"
    repo = make_git_repo(tmp_path_factory.mktemp("cors") / "app", CORS)
    with codecite.open_index(repo) as idx:
        idx.update(embed=False)
        builder, store = idx.answerer.context, idx.answerer.searcher.store

        def bridged() -> set[str]:
            shape = question_shape(asked)
            _, sought = idx.answerer.term_weights(asked, read_question(asked), shape)
            found = builder._settings(asked, shape, None, sought)
            return {c.qualname for c in store.get_chunks(found).values()}

        # the session's max_age holds the unit's words ("age", seconds), not the question
        assert bridged() == {"CORSMiddleware.__init__", "CORSMiddleware"}
        answer = idx.ask(asked, "extractive")
        assert answer.citations[0].path == "web/cors.py", answer.answer
        monkeypatch.setattr(context, "SETTINGS_MIN_SHARE", 0.0)
        assert "SessionMiddleware.__init__" in bridged()


def test_a_hedged_yes_or_no_says_what_the_closest_code_is_for() -> None:
    from codecite.answer.evidence import Evidence
    from codecite.answer.lead import lead_sentence
    from codecite.types import Chunk

    chunk = Chunk(
        "c1", "r", "src/termui.py", "python", "function", "confirm", "confirm", 190, 248,
        "", "", "h", docstring="Prompts for confirmation (yes/no question).\n\nMore text.",
    )  # fmt: skip
    ev = Evidence("src/termui.py", 237, 237, ("    rv = True",), 237, "value", 1.0, chunk, 0, 0.2)
    lead = lead_sentence(question_shape("Will a yes/no setting accept 'on' or 'off'?"), [ev])
    assert lead == (
        "The closest code is `confirm` (src/termui.py:237): Prompts for confirmation "
        "(yes/no question); `rv = True`."
    )


def test_how_long_asks_for_a_duration_and_the_longest_for_a_size() -> None:
    from codecite.answer.shape import unit_words

    assert "seconds" in unit_words("How long does a login session stay valid?")
    assert "bytes" not in unit_words("How long does a login session stay valid?")
    assert "bytes" in unit_words("What is the longest URL a client may send?")


def test_a_module_chunk_quotes_only_its_own_lines() -> None:
    # the functions inside a module chunk's range are chunks of their own: its evidence
    # is its imports and top-level code, never another chunk's lines under its name
    from codecite.answer.evidence import chunk_lines
    from codecite.chunking import chunk_file
    from codecite.config import Config

    text = (
        "import os\n\n"
        "LIMIT = 10\n\n\n"
        "def send(path):\n"
        "    if not path:\n"
        "        raise TypeError('path argument is required')\n"
        "    return path\n\n\n"
        "TIMEOUT = 30\n"
    )
    chunks = chunk_file(text, path="lib/send.py", language="python", repo="r", config=Config())
    module = next(c for c in chunks if c.kind == "module")
    assert (module.start_line, module.end_line) == (1, 12)
    lines = chunk_lines(module, lambda path: text.split("\n"))
    assert [n for n, t in lines if t.strip()] == [1, 3, 12]
    assert not any("raise" in t for _, t in lines)


def test_an_index_into_a_sequence_is_no_quantity(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "lib/response.js": (
            "/**\n"
            " * Redirect to the given `url` with an optional response `status`.\n"
            " */\n"
            "res.redirect = function redirect(url) {\n"
            "  var address = url;\n"
            "  var status = 302;\n"
            "  if (arguments.length === 2) {\n"
            "    status = arguments[1];\n"
            "    address = arguments[0];\n"
            "  }\n"
            "  return this.send(status, address);\n"
            "};\n"
        ),
    }
    question = "When we redirect without a status code, which status code is sent?"
    answer = ask_in(tmp_path_factory, files, question)
    assert question_shape(answer.question).kind == "quantity"  # "which status code"
    assert answer.evidence[0].focus_text == "var status = 302;"
    from codecite.answer.evidence import _NUMBER

    assert not _NUMBER.search("status = arguments[1];") and not _NUMBER.search("argv[-1]")
    assert _NUMBER.search("var status = 302;") and _NUMBER.search("sizes = [30, 60]")


def test_a_limit_is_answered_where_a_size_is_checked_against_its_bound(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "router/group.go": (
            "package router\n\n"
            "// abortIndex marks a chain that was aborted.\n"
            "const abortIndex int8 = 63\n\n"
            "// combine appends handlers to the group's own.\n"
            "func (g *Group) combine(handlers Chain) Chain {\n"
            "\tsize := len(g.Handlers) + len(handlers)\n"
            '\tassert1(size < int(abortIndex), "too many handlers")\n'
            "\tmerged := make(Chain, size)\n"
            "\tcopy(merged, g.Handlers)\n"
            "\treturn merged\n"
            "}\n"
        ),
    }
    limit = ask_in(tmp_path_factory, files, "Is there a limit on how many handlers a group holds?")
    check = next(ev for ev in limit.evidence if ev.focus_text.startswith("assert1("))
    assert check.features.get("q_bound") == 1.0
    assert not check.features.get("q_no_number")  # its bound is named, not written
    count = ask_in(tmp_path_factory, files, "How many handlers does a group hold?")
    # a count asked for, no limit: a comparison is not its answer
    assert not any(ev.features.get("q_bound") for ev in count.evidence)


def test_the_tests_of_a_file_named_after_the_subject_come_first(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = {
        "jobs/retry.py": (
            "def retry(job, times):\n"
            '    """Enqueue a failed job again, at most ``times`` times."""\n'
            "    job.retries_left = times\n"
            "    return job\n"
        ),
        "tests/test_worker.py": (
            "from jobs.retry import retry\n\n\n"
            "def test_worker_handles_retry_of_failed_jobs():\n"
            "    job = retry(make_failed_job(), 3)\n"
            "    assert job.retries_left == 3\n"
        ),
        "tests/test_retry.py": (
            "from jobs.retry import retry\n\n\n"
            "def test_a_failed_job_is_enqueued_again():\n"
            "    job = retry(make_failed_job(), 1)\n"
            "    assert job.retries_left == 1\n"
        ),
    }
    answer = ask_in(
        tmp_path_factory, files, "Which tests check the retry behaviour of failed jobs?"
    )
    assert answer.citations[0].path == "tests/test_retry.py"
    assert any(c.path == "tests/test_worker.py" for c in answer.citations)


def test_a_statement_over_several_lines_is_read_whole(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # ``raise TypeError(`` says nothing alone: its message, on the lines after it, does
    files = {
        "web/views.py": (
            "def make_response(rv):\n"
            '    """Turn what a view returned into a response."""\n'
            "    if isinstance(rv, tuple):\n"
            "        raise ValueError('a tuple needs a body and a status')\n"
            "    if rv is None:\n"
            "        raise TypeError(\n"
            '            "The view function did not return a valid response:"\n'
            '            " it returned nothing or ended without a return statement."\n'
            "        )\n"
            "    return rv\n"
        ),
    }
    answer = ask_in(tmp_path_factory, files, "What happens when a view function returns nothing?")
    lead = answer.evidence[0]
    assert lead.focus_text == "raise TypeError("
    assert lead.features["own"] > 0.5


def test_the_innermost_frame_of_a_traceback_outweighs_every_outer_one() -> None:
    from codecite.answer.evidence import EVIDENCE_WEIGHTS, _frame_weights

    weights = _frame_weights({0, 2, 5})  # depths of the frames naming indexed lines
    assert weights[0] == 1.0 and weights[2] == weights[5] == 0.5
    # the gap outweighs three quarters of a line's closeness to the report
    assert (weights[0] - weights[2]) * EVIDENCE_WEIGHTS["frame"] >= 0.75 * EVIDENCE_WEIGHTS[
        "line_sim"
    ]


def test_an_argument_line_of_a_call_is_a_fragment_and_a_parameter_is_not(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codecite.answer.evidence import EvidenceFinder

    lines: dict[str, dict[str, float]] = {}  # every line scored, before blocks merge
    scored = EvidenceFinder._chunk_evidence

    def record(self, hit, rank, top):  # type: ignore[no-untyped-def]
        found = scored(self, hit, rank, top)
        lines.update({ev.focus_text: ev.features for ev in found})
        return found

    monkeypatch.setattr(EvidenceFinder, "_chunk_evidence", record)
    files = {
        "web/sessions.py": (
            "class SessionMiddleware:\n"
            '    """Keeps the session in a signed cookie."""\n\n'
            "    def __init__(\n"
            "        self,\n"
            "        cookie: str = 'session',\n"
            "    ) -> None:\n"
            "        self.cookie = cookie\n\n"
            "    def save(self, session: dict) -> str:\n"
            '        """Sign the session data into the cookie."""\n'
            "        data = sign(encode(session))\n"
            "        return header(\n"
            "            cookie=self.cookie,\n"
            "            data=data,\n"
            "        )\n"
        ),
    }
    answer = ask_in(tmp_path_factory, files, "How is the session data stored in the cookie?")
    assert lines["data=data,"]["fragment"] == 1.0
    assert lines["cookie=self.cookie,"]["fragment"] == 1.0
    assert not lines["cookie: str = 'session',"].get("fragment")  # a signature's parameter
    assert not lines["data = sign(encode(session))"].get("fragment")  # a statement
    assert answer.evidence[0].focus_text not in ("data=data,", "cookie=self.cookie,")
