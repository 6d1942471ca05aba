"""Languages codecite knows: file extension → language name, and the
tree-sitter grammar of each code language (from the individual grammar wheels,
which work offline)."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import PurePosixPath

import tree_sitter

#: language name → (module, function returning the grammar pointer)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".cs": "c_sharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".phtml": "php",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".yaml": "config",
    ".yml": "config",
    ".json": "config",
    ".jsonc": "config",
    ".toml": "config",
    ".ini": "config",
    ".cfg": "config",
    ".conf": "config",
    ".xml": "config",
    ".properties": "config",
    ".env": "config",
}

#: Whole file names that decide the language on their own.
FILENAMES: dict[str, str] = {
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Dockerfile": "config",
    "Makefile": "text",
    ".env": "config",
    "setup.cfg": "config",
}

TEXT_LANGUAGES = ("markdown", "config", "text")


def detect_language(path: str) -> str:
    """Language name for a path: a tree-sitter language, or markdown/config/text."""
    p = PurePosixPath(path)
    if p.name in FILENAMES:
        return FILENAMES[p.name]
    return EXTENSIONS.get(p.suffix.lower(), "text")


def is_code_language(language: str) -> bool:
    return language in GRAMMARS


@cache
def get_language(name: str) -> tree_sitter.Language:
    """The tree-sitter Language for a language name (cached)."""
    module_name, func = GRAMMARS[name]
    module = importlib.import_module(module_name)
    return tree_sitter.Language(getattr(module, func)())


def get_parser(name: str) -> tree_sitter.Parser:
    """A new parser for a language (parsers are not shared across threads)."""
    return tree_sitter.Parser(get_language(name))
