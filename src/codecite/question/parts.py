"""Reading a long question (a pasted bug report) into its parts, each used for what it
is good at (issue 13):

- **prose** goes to BM25 and vectors;
- **code** (fenced, indented, ``>>>`` sessions) is searched on its own, so a long snippet
  does not drown the prose;
- **traceback frames** (``File "x/y.py", line N, in func`` and the equivalents of
  JavaScript, Java, Go, Rust and C#) and **file paths** (also in links to a forge's
  ``blob/<ref>/path#L12``) name files directly;
- **error messages** (``ValueError: cannot ...``) are exact text to look up: the line
  that raises one is often the answer;
- **identifiers** and dotted names go to the symbol table (:mod:`.intent`).

Short questions pass through unchanged: they have no parts to separate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Source file extensions a path mention or a frame may name.
_EXT = (
    r"py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|go|java|kt|rs|c|h|cc|cpp|hpp|cxx|cs|rb|php|swift|"
    r"scala|lua|sh|toml|ya?ml|json|cfg|ini|md|rst|sql|html|css|vue"
)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.$]+))?')
_OTHER_FRAMES = (
    # JavaScript / TypeScript: "at func (path/file.js:12:5)" or "at path/file.js:12:5";
    # "at new View (...)", "at async run (...)", "at Layer.handle [as handle_request] (...)"
    re.compile(
        r"\bat (?:(?:new |async )?([\w.$<>]+)(?: \[as [\w$]+\])? \()?"
        r"((?:[\w.@~-]*/)*[\w.@-]+\.(?:[cm]?js|jsx|tsx?)):(\d+)"
    ),
    # Java / Kotlin / Scala: "at pkg.Class.method(File.java:123)"
    re.compile(r"\bat ([\w.$]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala)):(\d+)\)"),
    # Go, Rust, C#, Ruby, PHP, C: "path/file.go:123" (optionally ":col")
    re.compile(r"((?:[\w.~-]*/)*[\w.-]+\.(?:go|rs|cs|rb|php|c|cc|cpp|h|hpp)):(\d+)"),
)
_PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT}))(?![\w/])")
_BLOB_LINK = re.compile(rf"/(?:blob|tree|src)/[^/\s]+/((?:[\w.-]+/)*[\w.-]+\.(?:{_EXT}))")
#: "ValueError: text", "numpy.core._exceptions.UFuncTypeError: text", "E   KeyError: 'x'"
_ERROR = re.compile(
    r"^[ \t>]*(?:E[ \t]+)?((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|"
    r"Interrupt|Failure|Fault))(?::[ \t]*(.+))?$",
    re.M,
)
_TRACEBACK_HEAD = re.compile(r"^[ \t]*Traceback \(most recent call last\):?[ \t]*$", re.M)
_PROMPT = re.compile(r"^[ \t]*(>>>|\.\.\.|In \[\d+\]:|Out\[\d+\]:|\$|%)[ \t]?", re.M)
_URL = re.compile(r"https?://\S+")
#: What varies between a raise and the message it wrote: quoted values, <reprs>,
#: numbers, and the placeholders people write for them when they quote a message
#: ("size of X exceeded", "expected {name}", "%s not found", "failed after ...": a lone
#: capital other than the words A and I, a format field, an ellipsis).
VARYING = re.compile(
    r"'[^']*'|\"[^\"]*\"|<[^>]*>|\S*\d\S*|(?<![\w'])[B-HJ-Z](?![\w'])|\{[^}]*\}|%[sdrifx]|"
    r"\.\.\.|\u2026"
)
#: Issue-template leftovers: HTML comments and task-list items.
_TEMPLATE = re.compile(r"<!--.*?-->|^[ \t]*[-*] \[[ xX]\] [^\n]*$", re.S | re.M)
#: Words of a question above which it is read as a long question (a bug report).
LONG_QUESTION_WORDS = 60


@dataclass(frozen=True)
class Frame:
    """One traceback frame: the file as the reporter's machine named it, the line,
    and the function (empty when the format has none)."""

    path: str
    line: int
    function: str = ""
    #: How far from where it failed: 0 for the innermost frame of its trace (a Python
    #: traceback's last, a JavaScript, Java or Go trace's first), 1 for its caller, ...
    depth: int = 0


@dataclass(frozen=True)
class Parts:
    """A question split into its parts."""

    text: str
    prose: str
    code: str = ""
    frames: tuple[Frame, ...] = ()
    #: Error messages as written (``ValueError: cannot reshape``).
    errors: tuple[str, ...] = ()
    #: File paths named in the text or in links (not the frames' paths).
    paths: tuple[str, ...] = ()
    #: Messages of pasted log or console output (the text after ``Error:``,
    #: ``[ERROR]``, ``panic:``): lines the code wrote, looked up like error messages.
    logged: tuple[str, ...] = ()
    #: Those of ``logged`` printed at a warning level (the program went on).
    warned: tuple[str, ...] = ()
    #: Phrases the question quotes (``'Exception in ASGI application'``): text the user
    #: saw, which the code may have written literally.
    quoted: tuple[str, ...] = ()
    long: bool = False
    #: Word counts of the prose and the code, for weighting.
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def error_texts(self) -> list[str]:
        """The messages' texts without the exception name (what a ``raise`` writes)."""
        return [e.partition(":")[2].strip() for e in self.errors if ":" in e]

    @property
    def messages(self) -> list[str]:
        """What the code may have written literally: the errors' texts, the logged
        messages, then the quoted phrases."""
        return list(dict.fromkeys([*self.error_texts, *self.logged, *self.quoted]))

    @property
    def failures(self) -> list[str]:
        """The messages of what failed: the errors' texts (a warning class's are not)
        and the logged messages above a warning level. A pasted console asks about its
        failure (``panic: ... conflicts with existing wildcard``), not the warnings
        printed before it."""
        raised = [
            e.partition(":")[2].strip() for e in self.errors
            if ":" in e and not e.partition(":")[0].strip().endswith("Warning")
        ]  # fmt: skip
        logged = [m for m in self.logged if m not in self.warned]
        return list(dict.fromkeys([*raised, *logged]))

    @property
    def error_types(self) -> list[str]:
        """The exceptions' class names (last dotted part)."""
        return [e.partition(":")[0].strip().rpartition(".")[2] for e in self.errors]


def read_parts(text: str) -> Parts:
    """The parts of ``text``; a short question is all prose. An issue template's
    leftovers (``<!-- instructions -->``, ``- [x] I searched ...`` checklists) are
    not the reporter's words and are dropped first."""
    text = _TEMPLATE.sub(" ", text)
    words = len(text.split())
    frames = tuple(_frames(text))
    errors = tuple(_errors(text))
    if (
        words < LONG_QUESTION_WORDS
        and not frames
        and not _FENCE.search(text)
        and not _pasted_output(text)
    ):
        return Parts(
            text, text, errors=errors, paths=tuple(_paths(text, frames)), quoted=_quoted(text)
        )
    code_parts: list[str] = []
    rest = _FENCE.sub(lambda m: _keep(code_parts, m.group(2)), text)
    rest = _TRACEBACK_HEAD.sub(" ", rest)
    rest = _ERROR.sub(" ", rest)  # searched on their own (``errors``)
    prose_lines: list[str] = []
    for block in re.split(r"\n[ \t]*\n", rest):
        lines = block.splitlines()
        if lines and all(_is_code_line(line) for line in lines if line.strip()):
            code_parts.append(block)
        else:
            for line in lines:
                (code_parts if _is_code_line(line) else prose_lines).append(line)
    prose = "\n".join(prose_lines)
    code = "\n".join(code_parts)
    logged = _logged(text)
    return Parts(
        text,
        prose=prose,
        code=code,
        frames=frames,
        errors=errors,
        paths=tuple(_paths(text, frames)),
        logged=tuple(m for m, _ in logged),
        warned=tuple(m for m, warning in logged if warning),
        quoted=_quoted(rest),
        long=True,
        sizes={"prose": len(prose.split()), "code": len(code.split())},
    )


#: A line of pasted console output: a shell prompt, a timestamped log line, an
#: ``Error:``/``panic:`` line.
_OUTPUT_LINE = re.compile(
    r"^[ \t]*(\$ \S|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|(error|fatal|panic|warning)\b\s*[:\]])",
    re.I | re.M,
)


def _pasted_output(text: str) -> bool:
    """Whether a short question holds pasted console output (two lines of it or more):
    read as a report, its logged messages looked for in the code."""
    return len(_OUTPUT_LINE.findall(text)) >= 2


#: A logged or printed message: the text after a level or ``Error:`` word.
_LOGGED = re.compile(
    r"(?:^|[\s\[])(?P<level>error|fatal|panic|warning|warn|critical|exception|failed|failure)"
    r"\]?\s*[:\]]\s*(?P<text>[^\n]{12,})",
    re.I | re.M,
)
#: Logged messages of one question kept (a pasted log repeats and runs long).
MAX_LOGGED = 12


def _logged(text: str) -> list[tuple[str, bool]]:
    """The logged messages, each with whether it was printed at a warning level."""
    out: dict[str, bool] = {}
    for m in _LOGGED.finditer(text):
        message = m.group("text").strip()
        if len(message.split()) < 3 or _TRACEBACK_HEAD.match(message):  # "...: Traceback"
            continue
        out.setdefault(message, m.group("level").lower().startswith("warn"))
    return list(out.items())[:MAX_LOGGED]


#: A phrase in quotes: double or typographic quotes, or single quotes that stand apart
#: from words (not the apostrophes of "don't" or "Let's").
_QUOTED = re.compile(
    r"\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d|\u2018([^\u2019\n]+)\u2019|"
    r"(?<![\w'])'([^'\n]+)'(?![\w'])"
)
#: Words a quoted phrase needs to be looked up as text the code wrote (a quoted name
#: or term, "auto" or 'trusted hosts', is a word of the question, not a message).
QUOTED_WORDS = 3


def _quoted(text: str) -> tuple[str, ...]:
    found = (next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(text))
    kept = dict.fromkeys(q for q in found if len(q.split()) >= QUOTED_WORDS)
    return tuple(kept)[:MAX_LOGGED]  # a long report's quotes are bounded like its log


def _keep(parts: list[str], code: str) -> str:
    parts.append(code)
    return "\n"


def _is_code_line(line: str) -> bool:
    """Indented by 4+ (or a tab), an interactive prompt, a frame, or a line of code
    punctuation (assignments, calls ending the line, decorators, imports)."""
    if not line.strip():
        return False
    if line.startswith(("    ", "\t")) or _PROMPT.match(line) or _PY_FRAME.search(line):
        return True
    stripped = line.strip()
    if re.match(r"^(import |from [\w.]+ import |def |class |@\w|return\b|raise\b)", stripped):
        return True
    return bool(re.match(r"^[\w.\[\]'\"]+\s*=\s*\S", stripped) and not stripped.endswith("."))


def _frames(text: str) -> list[Frame]:
    python = list(_PY_FRAME.finditer(text))  # most recent call last
    out = [
        Frame(m.group(1), int(m.group(2)), m.group(3) or "", len(python) - 1 - i)
        for i, m in enumerate(python)
    ]
    js, java, other = _OTHER_FRAMES  # innermost first
    out += [
        Frame(m.group(2), int(m.group(3)), m.group(1) or "", i)
        for i, m in enumerate(js.finditer(text))
    ]
    for i, m in enumerate(java.finditer(text)):
        folder = m.group(1).rpartition(".")[0].replace(".", "/")
        path = f"{folder}/{m.group(3)}" if folder else m.group(3)
        out.append(Frame(path, int(m.group(4)), m.group(2), i))
    seen = {f.path for f in out}
    out += [
        Frame(m.group(1), int(m.group(2)), depth=i)
        for i, m in enumerate(other.finditer(_PY_FRAME.sub(" ", text)))
        if m.group(1) not in seen
    ]
    return list(dict.fromkeys(out))


def _errors(text: str) -> list[str]:
    """The errors a text writes: on a line of their own, closing a traceback, or quoted
    in a sentence (Why do I get "RuntimeError: Working outside of ..."?)."""
    out = []
    quoted = (next(g for g in q.groups() if g is not None) for q in _QUOTED.finditer(text))
    found = [m for q in quoted if (m := _ERROR.fullmatch(q.strip())) and m.group(2)]
    for m in [*_ERROR.finditer(text), *found]:
        name, message = m.group(1), (m.group(2) or "").strip()
        out.append(f"{name}: {message}" if message else name)
    return list(dict.fromkeys([*out, *_traceback_ends(text)]))


#: The line closing a Python traceback: the exception, of any name, and its message
#: (``starlette.routing.NoMatchFound: No route exists ...``).
_TRACEBACK_END = re.compile(r"((?:[A-Za-z_]\w*\.)*[A-Z]\w*):[ \t]*(\S.*)")


def _traceback_ends(text: str) -> list[str]:
    """The exception line of each Python traceback: the first unindented line after
    its frames (an exception class need not end in ``Error``: ``NoMatchFound``,
    ``DoesNotExist``)."""
    out = []
    for head in _TRACEBACK_HEAD.finditer(text):
        framed = False
        for line in text[head.end() :].split("\n"):
            if _PY_FRAME.search(line):
                framed = True
            elif framed and line.strip() and not line.startswith((" ", "\t")):
                m = _TRACEBACK_END.fullmatch(line.strip())
                if m:
                    out.append(f"{m.group(1)}: {m.group(2).strip()}")
                break
    return out


def _paths(text: str, frames: tuple[Frame, ...]) -> list[str]:
    framed = {f.path for f in frames}
    found = [m.group(1) for m in _BLOB_LINK.finditer(text)]
    found += [m.group(1) for m in _PATH.finditer(_URL.sub(" ", text))]
    return [p for p in dict.fromkeys(found) if p not in framed and ("/" in p or _plain_file(p))]


def _plain_file(path: str) -> bool:
    """A bare file name (``fields.py``) counts when it is not a dotted name in prose
    (``os.path`` has no source extension; ``e.g.`` none at all)."""
    return "/" not in path and bool(re.fullmatch(r"[\w-]+\.(?:py|js|ts|go|java|rs|rb|php)", path))


def error_phrases(message: str, size: int = 3) -> list[str]:
    """Runs of ``size`` consecutive words of an error message (the parts most likely
    written literally in the ``raise``; quoted values and numbers are what varies, so
    they are left out), as phrase terms for the keyword index (words joined by ``_``)."""
    literal = VARYING.sub(" | ", message)
    phrases: list[str] = []
    for run in literal.split("|"):
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", run) if len(w) > 1]
        if len(words) >= 2:
            step = max(1, len(words) - size + 1)
            phrases += ["_".join(words[i : i + size]) for i in range(step)]
    return list(dict.fromkeys(phrases))
