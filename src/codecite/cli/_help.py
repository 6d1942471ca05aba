"""How ``--help`` reads: the typer classes every command and group of the CLI is built
with. Private to :mod:`codecite.cli`.

typer (0.29) renders a parameter's Python type as its placeholder (``--json <bool>``,
``--index <path>``, ``--lang <list[str]>``) and keeps a docstring's single line breaks
in the command list and in later paragraphs, so a description breaks mid-sentence
where the source line ended. Here a flag shows no placeholder, a value the usual
upper-case one (``TEXT``, ``PATH``, ``N``, ``NUMBER``; an option may name its own with
``metavar=``), an argument its name (``QUERY``), and every paragraph is one line that
the terminal wraps. Paragraphs that start with ``\\b`` or hold indented lines keep
their layout, and rich markup in help is escaped (it is text)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_args, get_origin

import typer
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.models import CommandFunctionType

#: Placeholder of an option's value, by its Python type (a list's: its items'). A
#: choice keeps typer's ``a|b``.
PLACEHOLDERS: dict[type, str] = {str: "TEXT", int: "N", float: "NUMBER"}


def tidy_text(text: str | None) -> str | None:
    """A help text with each paragraph on one line, except a paragraph that starts
    with ``\b`` or holds indented lines (an example: kept line by line, the ``\b``
    dropped), and with rich markup escaped (``[repos.shop]`` is text, not a tag)."""
    if not text:
        return text
    paragraphs = []
    for part in inspect.cleandoc(text).split("\n\n"):
        if part.startswith("\b"):
            paragraphs.append(part.lstrip("\b").lstrip("\n"))
        elif any(line.startswith(" ") for line in part.splitlines()):
            paragraphs.append(part)
        else:
            paragraphs.append(" ".join(line.strip() for line in part.splitlines()))
    return escape("\n\n".join(paragraphs))


def placeholder(option: TyperOption) -> str | None:
    """``TEXT``, ``PATH``, ``N``, ... for an option's value; None: typer's own."""
    desc = option.type_descriptor
    if desc.is_choice:
        return None
    if desc.is_file:
        return "FILE"
    if desc.is_path:
        return "PATH"
    annotation: Any = desc.annotation
    items = get_args(annotation) if get_origin(annotation) in (list, tuple) else ()
    base = items[0] if items else annotation
    return PLACEHOLDERS.get(base, getattr(base, "__name__", "VALUE").upper())


class _Argument(TyperArgument):
    """An argument shown by its name alone (``QUERY``), with no type column."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        """``QUERY`` when required, ``[PATH]`` when not (typer writes ``{QUERY}``)."""
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def tidy_param(param: Any) -> None:
    """Set the placeholder a parameter shows, and one-line paragraphs in its help."""
    if isinstance(param, TyperOption):
        param.help = tidy_text(param.help)
        if param.metavar is None:
            if param.is_flag or param.count:
                param.metavar = ""
            else:
                param.metavar = placeholder(param)
    elif isinstance(param, TyperArgument):
        param.help = tidy_text(param.help)
        if param.metavar is None and param.name:
            param.metavar = param.name.upper()
        param.__class__ = _Argument


class _Tidied:
    """Help that reads as sentences, with usual placeholders (a mixin of a click
    command or group: its text, its parameters and its --help option tidied)."""

    help: str | None
    short_help: str | None
    params: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = tidy_text(self.help)
        self.short_help = tidy_text(self.short_help)
        for param in self.params:
            tidy_param(param)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            tidy_param(option)
        return option


class Command(_Tidied, TyperCommand):
    """A command whose help reads as sentences, with usual placeholders."""


class Group(_Tidied, TyperGroup):
    """A group (``codecite``, ``codecite token``) tidied like :class:`Command`."""


class CLI(typer.Typer):
    """``typer.Typer`` whose groups and commands are :class:`Group` and :class:`Command`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=Group, **kwargs)

    def command(
        self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        return super().command(*args, cls=cls or Command, **kwargs)
