"""``codecite explain`` (one symbol, cited, in the terminal) and ``codecite docs``
(markdown pages for a folder of the repository)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ..errors import PathError
from ._shared import (
    IndexOpt,
    JsonOpt,
    RepoArg,
    app,
    emit_json,
    err,
    open_for_query,
    out,
    progress_bar,
)

if TYPE_CHECKING:  # the explain and docs packages load when a command runs
    from ..explain import Explanation

#: Control characters shown as ``\xNN`` in the terminal (newline and tab are kept).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@app.command()
def explain(
    target: Annotated[
        str,
        typer.Argument(
            help="The symbol: a name (Deal.close, or close when it is unique), "
            "path::qualname, or path:line."
        ),
    ],
    path: RepoArg = None,
    index_dir: IndexOpt = None,
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm",
            help="extractive (default: the facts, offline, no model), auto, or openai:MODEL "
            "(a model writes the prose from the same facts; its citations are checked).",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible endpoint for --llm openai:MODEL."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Explain a function, method or class: what it is for, its parameters, what it
    raises, what it calls, real usage examples and its tests, every statement cited. A
    documented constant (DEFAULT_TIMEOUT): its doc, its value and the code that reads it.

    An ambiguous name lists the candidates (exit 1); pick one with path:line."""
    overrides: dict[str, object] = {"llm_base_url": base_url} if base_url else {}
    with open_for_query(path, index_dir, overrides) as idx:
        choice = idx.choose_llm(llm) if llm else None
        if choice is not None and not as_json:
            err.print(f"[dim]writing with {escape(choice.name)} ({escape(choice.reason)})[/dim]")
        explanation = idx.explain(target, llm=choice)
    if as_json:
        emit_json(explanation.to_json())
        return
    _print(explanation)


def _print(expl: Explanation) -> None:
    from rich.markdown import Markdown

    from ..answer.citations import cite

    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", expl.markdown)
    out.print(Markdown(text, code_theme="ansi_dark", hyperlinks=False))
    verified = sum(c.verified for c in expl.citations)
    unverified = [c for c in expl.citations if not c.verified]
    mode = "facts from the index, no model" if expl.prose == "" else f"written by {expl.llm}"
    out.print(
        f"[dim]{verified}/{len(expl.citations)} citations verified · {escape(mode)} · "
        f"{expl.timings_ms.get('total', 0):.0f} ms[/dim]"
    )
    for c in unverified:
        where = escape(cite(c.path, c.start_line, c.end_line))
        why = "partly outside" if c.partial else "not in"
        out.print(f"  [red]✗ {where}[/red] [dim]({why} the code the facts come from)[/dim]")


@app.command()
def docs(
    path: Annotated[
        Path,
        typer.Argument(
            help="A folder or file of an indexed repository (its index is found above it)."
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Where to write the pages (created if needed).")
    ] = Path("docs/api"),
    private: Annotated[
        bool, typer.Option("--private", help="Document private symbols too (_name, unexported).")
    ] = False,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write markdown documentation: one page per module and an index page, every
    statement cited and linked to the source lines. Re-running rewrites only the pages
    whose symbols changed."""
    from .. import open_existing
    from ..explain.docs import INDEX_PAGE, write_docs

    if not path.exists():
        raise PathError(f"{path}: no such file or folder; give a folder of an indexed repository")
    with open_existing(index_dir, start=path if path.is_dir() else path.parent) as idx:
        where = path.resolve()
        if where != idx.root and idx.root not in where.parents:
            raise PathError(f"{path}: not inside the indexed repository {idx.root}")
        with progress_bar(not as_json and err.is_terminal) as on_progress:
            report = write_docs(idx, where, out_dir, private=private, on_progress=on_progress)
    if as_json:
        emit_json(report.to_json())
        return
    out.print(
        f"{report.modules} module page(s), {report.symbols} symbols: "
        f"[green]{len(report.written)} written[/green], {len(report.unchanged)} unchanged"
        + (f", {len(report.removed)} removed" if report.removed else "")
        + f" in {escape(report.out_dir)} ({report.seconds:.1f}s)",
        soft_wrap=True,
    )
    start = Path(report.out_dir) / INDEX_PAGE
    out.print(
        f"[dim]start at {escape(str(start))}; links to the code are "
        f"{escape(report.source_base)}[/dim]",
        soft_wrap=True,
    )
    for flag in report.flags:
        out.print(f"[yellow]warning:[/yellow] {escape(flag)}", soft_wrap=True)
