"""Chunk quality per language (run by hand; also called by index_bench.py):

    python bench/chunk_quality.py [FOLDER ...]

For every code file under the folders (default: the test fixtures, plus any
given folder such as an unpacked sdist): the share of function/method chunks
that re-parse alone (target 100%), and chunk sizes in lines and in tokens of
the embedding model (the share over its 256-token window is what truncation
loses).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from codecite.chunking import chunk_file
from codecite.chunking.grammars import detect_language, is_code_language
from codecite.chunking.reparse import parses_alone
from codecite.config import Config
from codecite.embed.local import _load_tokenizer
from codecite.walk import walk

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
MODEL_WINDOW = 256


def _files(roots: list[Path]) -> list[Path]:
    """The files codecite would index under each root (vendored, minified, generated and
    binary files left out, as ``codecite index`` does)."""
    out: list[Path] = []
    for root in roots:
        out += [Path(f.abspath) for f in walk(root, Config()).files]
    return sorted(out)


def chunk_quality(roots: list[Path]) -> dict[str, dict[str, float]]:
    config, tokenizer = Config(), _load_tokenizer()
    tokenizer.no_truncation()  # count every token, not just the model window
    defs: dict[str, list[bool]] = defaultdict(list)
    lines: dict[str, list[int]] = defaultdict(list)
    texts: dict[str, list[str]] = defaultdict(list)
    for path in _files([*roots, FIXTURES]):
        language = detect_language(path.name)
        if not is_code_language(language) or path.stat().st_size > 1_048_576:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for chunk in chunk_file(text, path=path.name, language=language, repo="b", config=config):
            lines[language].append(chunk.content.count("\n") + 1)  # content, not span
            texts[language].append(chunk.content)
            if chunk.kind in ("function", "method") and chunk.part == 0:
                defs[language].append(parses_alone(chunk))
    result: dict[str, dict[str, float]] = {}
    for language in sorted(lines):
        tokens = np.array([len(e.ids) for e in tokenizer.encode_batch(texts[language])])
        n_lines = np.array(lines[language])
        ok = defs[language]
        result[language] = {
            "chunks": len(n_lines),
            "definitions": len(ok),
            "reparse_ok_pct": 100.0 * sum(ok) / len(ok) if ok else 100.0,
            "lines_p50": int(np.percentile(n_lines, 50)),
            "lines_p90": int(np.percentile(n_lines, 90)),
            "lines_max": int(n_lines.max()),
            "tokens_p50": int(np.percentile(tokens, 50)),
            "tokens_p90": int(np.percentile(tokens, 90)),
            "over_256_tokens_pct": 100.0 * float((tokens > MODEL_WINDOW).mean()),
        }
    return result


if __name__ == "__main__":
    quality = chunk_quality([Path(p) for p in sys.argv[1:]])
    for lang, q in quality.items():
        print(
            f"{lang:11s} chunks {q['chunks']:6d} defs {q['definitions']:6d} "
            f"reparse {q['reparse_ok_pct']:6.2f}%  lines p50/p90/max "
            f"{q['lines_p50']}/{q['lines_p90']}/{q['lines_max']}  tokens p50/p90 "
            f"{q['tokens_p50']}/{q['tokens_p90']}  >256 {q['over_256_tokens_pct']:.0f}%"
        )
    print(json.dumps(quality))
