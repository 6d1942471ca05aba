"""The static tier's embedder: codecite's own code retrieval model (issue 24).

A table of token vectors over the bundled MiniLM tokenizer's WordPiece vocabulary;
a text's vector is the L2-normalised sum of its tokens' rows: thousands of chunks a
second, no model run. The table was trained for code retrieval by
``scripts/train_code_model`` (in-batch-negative InfoNCE over docstring ↔ function
pairs from open-source PyPI releases, doc comment ↔ function pairs from npm packages
(JavaScript, TypeScript) and commit message ↔ changed function pairs from git
histories, starting from token vectors distilled from MiniLM) and ships in the
package as float16 (``data/static-code-v3.npy``) beside its manifest
(``data/static-code-v3.json``: version, shape, digest, recipe, data and figures).
Nothing is built or downloaded at run time: the first ``codecite index`` loads it
(tens of milliseconds).

Other static models are chosen with the ``static_model`` setting: a table of one's
own (a ``.npy`` file of vocabulary × dimensions, e.g. retrained on a company's
history with ``scripts/train_code_model``), named in the index by its digest, or a
model registered by name (:func:`register_static_model`; the benchmarks register
the previous code model and the distilled model of issue 15, so all are measured in
one run).
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..config import Config
from ..errors import ConfigError, EmbeddingError
from .base import l2_normalise
from .local import _load_tokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: Bump when the shipped table changes: index vectors of another version are
#: rebuilt (the name below changes with it).
STATIC_VERSION = 3
STATIC_DIM = 256
#: The shipped static model's id, stored in the index (``static_model``).
STATIC_MODEL_NAME = f"static-code-v{STATIC_VERSION}-{STATIC_DIM}"
TABLE_FILE = f"data/static-code-v{STATIC_VERSION}.npy"
MANIFEST_FILE = f"data/static-code-v{STATIC_VERSION}.json"
#: The table an extractive answer weighs its lines and words with (closeness to the
#: question, words alike in meaning): the previous code model, kept because the
#: answer's evidence weights were fitted on its geometry. With v3 there instead, the
#: answer benchmark fell (evidence@3 0.732 -> 0.716, lead hit 0.611 -> 0.579); with
#: v3 searching and v2 weighing lines, all 258 answers are as before.
LINE_MODEL_NAME = f"static-code-v2-{STATIC_DIM}"
LINE_TABLE_FILE = "data/static-code-v2.npy"
LINE_MANIFEST_FILE = "data/static-code-v2.json"
#: Tokens read per text (chunk texts average ~130, a few reach ~300).
MAX_TOKENS = 512
#: Texts summed per numpy step in :meth:`StaticEmbedder.embed` (bounds memory).
_EMBED_STEP = 128


def load_tokenizer() -> Tokenizer:
    """The bundled MiniLM tokenizer, reading up to :data:`MAX_TOKENS` tokens."""
    tokenizer = _load_tokenizer()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def _read_package_file(name: str) -> bytes:
    try:
        return resources.files("codecite.embed").joinpath(name).read_bytes()
    except OSError as exc:
        raise EmbeddingError(f"cannot read codecite's {name} ({exc}); reinstall codecite") from None


def shipped_manifest(manifest_file: str = MANIFEST_FILE) -> dict[str, Any]:
    """A shipped table's manifest (version, shape, digest, recipe, data, figures): the
    static tier's by default."""
    try:
        info = json.loads(_read_package_file(manifest_file))
    except ValueError as exc:
        raise EmbeddingError(f"codecite's {manifest_file} is damaged ({exc}); reinstall") from None
    if not isinstance(info, dict):
        raise EmbeddingError(f"codecite's {manifest_file} is damaged; reinstall codecite")
    return info


def shipped_table(
    table_file: str = TABLE_FILE,
    manifest_file: str = MANIFEST_FILE,
    name: str = STATIC_MODEL_NAME,
) -> np.ndarray:
    """A shipped token table as float32 (rows = vocabulary ids, :data:`STATIC_DIM`
    columns), checked against its manifest: the static tier's by default."""
    raw = _read_package_file(table_file)
    info = shipped_manifest(manifest_file)
    table = info.get("table", {})
    if hashlib.sha256(raw).hexdigest() != table.get("sha256"):
        raise EmbeddingError(f"codecite's {table_file} does not match its manifest; reinstall")
    matrix = np.load(io.BytesIO(raw), allow_pickle=False)
    expected = (info.get("rows"), STATIC_DIM)
    if info.get("model") != name or matrix.shape != expected:
        raise EmbeddingError(
            f"codecite's {table_file} is {info.get('model')} {matrix.shape}, "
            f"not {name}; reinstall codecite"
        )
    return np.asarray(matrix, dtype=np.float32)


def line_table() -> np.ndarray:
    """The table answers weigh lines with (:data:`LINE_MODEL_NAME`), checked."""
    return shipped_table(LINE_TABLE_FILE, LINE_MANIFEST_FILE, LINE_MODEL_NAME)


class StaticEmbedder:
    """An :class:`~codecite.embed.Embedder` over static token vectors: a text's vector
    is the L2-normalised sum of its tokens' vectors."""

    max_tokens: int = MAX_TOKENS

    def __init__(self, matrix: np.ndarray, name: str = STATIC_MODEL_NAME) -> None:
        self._name = name
        # One zero row at the end stands for the special and out-of-range ids.
        zero = np.zeros((1, matrix.shape[1]), np.float32)
        self._matrix = np.vstack([np.asarray(matrix, np.float32), zero])
        self._rows = int(matrix.shape[0])
        self._tokenizer = load_tokenizer()
        # encode_batch_fast (tokenizers >= 0.21) skips the offsets we do not use.
        self._encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"):
            token_id = self._tokenizer.token_to_id(special)
            if token_id is not None and token_id < self._rows:
                self._matrix[token_id] = 0.0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return int(self._matrix.shape[1])

    def embed(
        self, texts: Sequence[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        """float32 (len(texts), dim), unit rows (a text with no known token: zeros)."""
        if kind not in ("document", "query"):
            raise ValueError(f"kind must be 'document' or 'query', not {kind!r}")
        return l2_normalise(self.sums(texts))

    def sums(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim): each text's token vectors summed, not normalised, so
        the rows of two texts add up to (about) the row of the two written together."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _EMBED_STEP):
            part = list(texts[start : start + _EMBED_STEP])
            encodings = self._encode(part, add_special_tokens=False)
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64)
            filled = np.flatnonzero(lengths)
            if not len(filled):
                continue
            flat = np.concatenate([np.asarray(encodings[i].ids, np.int64) for i in filled])
            flat[flat >= self._rows] = self._rows
            offsets = np.concatenate([[0], np.cumsum(lengths[filled])[:-1]])
            out[start + filled] = np.add.reduceat(self._matrix[flat], offsets, axis=0)
        return out


#: Static models by the name the index records: a loader of each one's table.
STATIC_MODELS: dict[str, Callable[[], np.ndarray]] = {
    STATIC_MODEL_NAME: shipped_table,
    LINE_MODEL_NAME: line_table,
}
_embedders: dict[str, StaticEmbedder] = {}
_embedders_lock = threading.Lock()
#: Table files already read: (path, mtime) -> model name.
_files: dict[tuple[str, int], str] = {}


def register_static_model(name: str, loader: Callable[[], np.ndarray]) -> None:
    """Make another static model choosable by the ``static_model`` setting (its
    ``loader`` returns the float32 token table)."""
    with _embedders_lock:
        STATIC_MODELS[name] = loader
        _embedders.pop(name, None)


def _table_file(path: str) -> str:
    """Register the token table in the ``.npy`` file ``path``; returns its model name
    (``static-file-DIGEST-DIM``: another table, another name, so the index rebuilds)."""
    file = Path(path).expanduser()
    try:
        key = (str(file.resolve()), file.stat().st_mtime_ns)
        if key in _files:
            return _files[key]
        raw = file.read_bytes()
        matrix = np.load(io.BytesIO(raw), allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"static_model {path}: cannot read the table ({exc})") from None
    rows = load_tokenizer().get_vocab_size()
    if matrix.ndim != 2 or matrix.shape[0] != rows or not np.isfinite(matrix).all():
        raise ConfigError(
            f"static_model {path}: expected a finite ({rows}, DIM) table, got {matrix.shape}"
        )
    name = f"static-file-{hashlib.sha256(raw).hexdigest()[:12]}-{matrix.shape[1]}"
    table = np.asarray(matrix, dtype=np.float32)
    with _embedders_lock:
        STATIC_MODELS.setdefault(name, lambda: table)
        _files[key] = name
    return name


def static_model_name(config: Config | None = None) -> str:
    """The static model ``config`` chooses (``static_model``: "" = the shipped one, a
    registered name, or the path of a ``.npy`` token table)."""
    name = (config.embed.static_model if config is not None else "") or STATIC_MODEL_NAME
    if name.endswith(".npy") and name not in STATIC_MODELS:
        name = _table_file(name)
    if name not in STATIC_MODELS:
        raise ConfigError(
            f'unknown static_model "{name}"; choose from {", ".join(sorted(STATIC_MODELS))} '
            "or give the path of a .npy token table"
        )
    return name


def static_embedder(config: Config | None = None) -> StaticEmbedder:
    """This process's static embedder for ``config``'s model, loaded once."""
    return named_embedder(static_model_name(config))


def named_embedder(name: str) -> StaticEmbedder:
    """This process's embedder of the registered static model ``name``, loaded once."""
    with _embedders_lock:
        embedder = _embedders.get(name)
        if embedder is None:
            embedder = _embedders[name] = StaticEmbedder(STATIC_MODELS[name](), name)
        return embedder


def static_query_vector(text: str, config: Config | None = None) -> np.ndarray:
    """The unit static vector of a query, to search the static tier of an index whose
    ``static_model`` meta is the model ``config`` chooses."""
    vector: np.ndarray = static_embedder(config).embed([text], "query")[0]
    return vector
