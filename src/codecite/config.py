"""One typed configuration, loaded in layers:
defaults → ``codecite.toml`` in the repository (or ``[tool.codecite]`` in
``pyproject.toml``) → ``CODECITE_*`` environment variables → explicit overrides
(CLI flags).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

log = logging.getLogger(__name__)

ENV_PREFIX = "CODECITE_"
#: Values of the `vector_search` setting.
VECTOR_SEARCH_MODES = ("auto", "memory", "database")
#: Every environment variable that configures the chat endpoint (for docs and tests).
LLM_ENV_VARS = (
    "CODECITE_LLM_BASE_URL",
    "OPENAI_BASE_URL",
    "CODECITE_LLM_API_KEY",
    "OPENAI_API_KEY",
    "CODECITE_LLM_MODEL",
)
#: API keys are read from the environment only (never from a file that may be committed).
LLM_API_KEY_ENVS = ("CODECITE_LLM_API_KEY", "OPENAI_API_KEY")
EMBED_BASE_URL_ENVS = ("CODECITE_OPENAI_BASE_URL", "OPENAI_BASE_URL")
EMBED_API_KEY_ENVS = ("CODECITE_OPENAI_API_KEY", "OPENAI_API_KEY")
#: OpenAI's API, used when no base URL is configured.
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def first_env(environ: Mapping[str, str], names: Sequence[str]) -> str:
    """The first non-blank value among the environment variables ``names``."""
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return ""


@dataclass(frozen=True)
class Endpoint:
    """How to reach one OpenAI-compatible server (chat or embeddings), resolved once
    from the config layers (:meth:`Config.llm_endpoint`, :meth:`Config.embedding_endpoint`).
    ``base_url`` "" means none configured (clients then use :data:`DEFAULT_BASE_URL`)."""

    base_url: str = ""
    api_key: str = ""
    #: The model to use when the caller names none (``--llm auto``).
    model: str = ""
    #: Seconds to wait for each read (streaming: for each piece).
    timeout: float = 60.0
    connect_timeout: float = 10.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 20.0

    @property
    def url(self) -> str:
        """The base URL to call (OpenAI's when none is configured)."""
        return self.base_url or DEFAULT_BASE_URL


@dataclass
class IndexConfig:
    """What is indexed and how it is cut: the walk, chunking, secret scrubbing, parsing."""

    # --- walk -----------------------------------------------------------------
    #: Extra gitignore-style patterns to exclude (on top of .gitignore and .codeciteignore).
    exclude: list[str] = field(default_factory=list)
    #: Files larger than this are skipped (bytes).
    max_file_bytes: int = 1_048_576
    #: Follow the default excludes (lock files, vendored, minified, generated).
    default_excludes: bool = True
    # --- chunking -------------------------------------------------------------
    #: A function longer than this many lines is split at statement boundaries.
    max_chunk_lines: int = 150
    #: A class outline (skeleton) longer than ``max_chunk_lines`` is cut between
    #: members into parts of about this many lines: a field of a long outline is then
    #: found by its own words (a 900-line outline ranks for none of them).
    class_part_lines: int = 60
    #: Text/config files up to this many lines are one ``file`` chunk.
    small_file_lines: int = 50
    #: Line windows for large text files and unknown languages.
    window_lines: int = 60
    window_overlap: int = 15
    # --- scrubbing ------------------------------------------------------------
    #: Redact secrets (keys, tokens, passwords, high-entropy literals) before anything
    #: is stored or embedded.
    scrub_secrets: bool = True
    #: Minimum Shannon entropy (bits/char) for a string literal to count as a secret.
    entropy_threshold: float = 4.2
    #: Minimum length of such a literal.
    entropy_min_length: int = 24
    # --- parsing --------------------------------------------------------------
    #: Worker processes for parsing; 0 means one per core.
    workers: int = 0


@dataclass
class EmbedConfig:
    """The embedding models: the static tier and the model tier, their cache."""

    #: Registry name of the embedder ("minilm", "openai:MODEL", ...).
    embedder: str = "minilm"
    #: Chunks per batch given to the local embedding model.
    embed_batch_size: int = 32
    #: Threads for the local model; 0 means all cores.
    embed_threads: int = 0
    #: Shared embedding cache folder; "" means ``CODECITE_CACHE_DIR``, else the user
    #: cache folder.
    cache_dir: str = ""
    #: Build the static vector tier (issue 15) before the model's vectors: search is
    #: good within seconds. Env: CODECITE_STATIC_TIER.
    static_tier: bool = True
    #: The static tier's model: "" is the one shipped in the package (issue 24); else
    #: the path of a ``.npy`` token table of one's own (scripts/train_code_model), or a
    #: name registered by ``codecite.embed.static.register_static_model``. Another
    #: table gives another name in the index, whose static tier is then rebuilt.
    #: Extractive answers weigh their lines with the shipped ``static-code-v2-256``
    #: whatever this says (their evidence weights were fitted on it).
    static_model: str = ""
    #: Chunks committed per embedding batch transaction.
    embed_commit_every: int = 256
    #: The ``openai:MODEL`` embedder's endpoint: base URL ("" = CODECITE_OPENAI_BASE_URL,
    #: then OPENAI_BASE_URL), seconds per read, retries; its key only from the
    #: environment: CODECITE_OPENAI_API_KEY or OPENAI_API_KEY.
    embed_base_url: str = ""
    embed_timeout: float = 60.0
    embed_max_retries: int = 4


@dataclass
class SearchConfig:
    """Retrieval: fusion, long questions, keyword index, graph expansion, reranking."""

    #: Reciprocal Rank Fusion constant: score = sum(weight / (rrf_k + rank)). Stop 55
    #: measured 30 with ``rerank_agreement`` 0 and ``rerank_path_prior`` 0.3 on open data
    #: (bench/search_settings.py, 24 training projects: docstring MRR@10 0.450 -> 0.461,
    #: commit subjects 0.347 -> 0.373) and the search benchmark (file MRR 0.772 -> 0.790),
    #: but answers did not follow (the answer model, refitted on it, overturns search's
    #: right first hit on the README's own question, and the first answer falls 3.2 / 3.3
    #: points behind the full index's): not the default yet (BENCHMARKS.md, stop 55).
    rrf_k: int = 60
    #: RRF weights of the keyword and the vector lists (a question of identifiers
    #: and words).
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    #: A query counts as mostly identifiers when at least this share of its words are.
    identifier_heavy_share: float = 0.5
    #: Weights used instead when the query is mostly identifiers (``calculatePriceWithTax``).
    identifier_keyword_weight: float = 2.0
    identifier_vector_weight: float = 0.5
    #: Weights used instead for natural-language questions with no identifier.
    prose_keyword_weight: float = 1.0
    prose_vector_weight: float = 1.0
    #: The static tier's list (issue 15) weighs the vector weight times this while
    #: model vectors are missing, and times ``static_weight_full`` once all exist. With
    #: the trained code model (issue 24) the static list helps the full pipeline's
    #: retrieval too (docstring benchmark file MRR 0.773 at 0, 0.790 at 0.5, 0.794 at
    #: 1.0; bug reports Acc@5 59.6 at 0, 60.5 at 1.0), but not the answers: on
    #: the answer benchmark (bench/answer_bench.py, MiniLM embedded) 1.0 measured
    #: evidence@3 0.716 against 0.737 and lead hit 0.558 against 0.611, and a shop
    #: question then abstains. So it stays 0 (issue 24, stop 36). Stop 55, with the
    #: settings measured there (see ``rrf_k``): 0.5 raised the 24 training projects'
    #: docstring MRR@10 0.461 -> 0.492 (the code model saw their docstrings) but lowered
    #: the answer benchmark's search order lead 0.453 -> 0.437 and the answer's 0.500 ->
    #: 0.484: still 0.
    static_weight: float = 1.0
    static_weight_full: float = 0.0
    #: Candidates taken from each list before fusion.
    candidates: int = 50
    #: Where vector search runs: "memory" (each process loads a tier's vectors and
    #: scores them exactly; reloaded after another process commits), "database" (the
    #: store's approximate index: pgvector HNSW, nothing loaded), or "auto" (database
    #: where the store has such an index, i.e. PostgreSQL; memory otherwise).
    vector_search: str = "auto"
    #: Long questions (bug reports, retrieve/question.py): the most informative terms
    #: kept per part, the identifiers looked up, and each part's RRF weight.
    long_query_terms: int = 24
    long_query_symbols: int = 20
    #: Keyword candidates whose files' evidence is added up (``prose_files`` list).
    long_query_pool: int = 300
    #: Work bounds of a long question, whatever its length: traceback frames and path
    #: mentions resolved to files, distinct terms weighed, error phrases looked up, and
    #: the seconds its parts may take (a part started after that is skipped, so one
    #: question never holds a repository for long).
    long_query_files: int = 24
    long_query_max_terms: int = 2_000
    long_query_phrases: int = 64
    long_query_seconds: float = 3.0
    #: RRF weights of a long question's parts: its files' added-up evidence, its
    #: prose, its code lines, its identifiers, the files it names, its error messages,
    #: its vector search (0.5, measured on bench/bugs_bench.py once the benchmark's
    #: searcher saw each commit's static vectors: Acc@5 / MRR 60.5 / 0.758 at 2.0, 60.5 /
    #: 0.794 at 1.0, 61.4 / 0.800 at 0.5; keyword alone 61.0 / 0.798).
    question_file_evidence_weight: float = 1.0
    question_prose_weight: float = 1.0
    question_code_weight: float = 0.6
    question_symbol_weight: float = 1.0
    question_file_weight: float = 1.5
    question_error_weight: float = 1.0
    question_vector_weight: float = 0.5
    #: BM25 weights of the keyword index's columns (symbol names, path, body).
    bm25_symbol_weight: float = 4.0
    bm25_path_weight: float = 2.0
    bm25_body_weight: float = 1.0
    #: On an index of at least this many chunks, question terms found in more than
    #: this share of chunks are left out of the keyword query (speed; little signal).
    keyword_prune_min_chunks: int = 20_000
    keyword_max_df_share: float = 0.08
    #: Graph expansion: on by default, from the top seeds, hard cap on added chunks.
    expand: bool = True
    expand_seeds: int = 5
    expand_max: int = 20
    #: An expanded chunk scores this share of its seed's score (so it ranks below it).
    expand_score_factor: float = 0.6
    #: Rerank (on by default): signals we own, added to the fused score normalised to
    #: [0, 1]: an exact symbol match (short and long questions), both lists agreeing (0
    #: measured in stop 55: commit subjects of 24 projects MRR@10 0.347 -> 0.361, 14
    #: projects better, none worse; docstrings 3 better, 6 worse; see ``rrf_k``).
    rerank: bool = True
    rerank_exact_symbol: float = 0.5
    rerank_exact_symbol_long: float = 0.25
    rerank_agreement: float = 0.15
    #: Agreement counts when the chunk is within this rank in both lists.
    rerank_agreement_top: int = 10
    #: Added for a hit linked by a graph edge to other top hits.
    rerank_graph_proximity: float = 0.1
    #: Graph proximity is looked for among this many top hits.
    rerank_proximity_pool: int = 20
    #: Subtracted for tests/docs/examples unless the question is about them (then added).
    #: (0.3 measured in stop 55: commit subjects MRR@10 0.347 -> 0.364, 17 projects
    #: better, none worse; docstrings 0.450 -> 0.453; see ``rrf_k``.)
    rerank_path_prior: float = 0.15
    #: The same for long questions (bug reports).
    rerank_path_prior_long: float = 0.4
    #: Subtracted for prose, configuration and text files (markdown, YAML, ChangeLog)
    #: unless the question names such things (docs, config, CI, setup, ...).
    rerank_non_code_prior: float = 0.3
    #: For long questions, a hit gains this share of the evidence of its file's other
    #: hits (retrieve/files.py; file rankings, ``search --files``, always add it up).
    file_evidence_weight: float = 0.3
    #: A file's evidence: its hits' scores, the i-th best times this to the power i.
    file_evidence_decay: float = 0.5
    #: At most this many chunks of one file before other files get a turn (0: no limit).
    max_chunks_per_file: int = 3
    #: ``search --files``: the best chunks shown under each file.
    file_chunks: int = 3
    #: A class chunk spanning at least this many lines ranks as coarse as a module.
    large_class_lines: int = 300
    #: Subtracted for module headers, line windows and whole files (less precise units).
    rerank_coarse_kind: float = 0.05
    #: Characters per token when packing to a budget.
    chars_per_token: float = 3.5


@dataclass
class AnswerConfig:
    """Answers: the LLM endpoint, the context, the extractive answer, abstention."""

    #: "auto" (configured endpoint, else Ollama on localhost, else extractive),
    #: "extractive", or "openai:MODEL" for any OpenAI-compatible chat endpoint.
    llm: str = "auto"
    #: Base URL of the chat endpoint ("" = OPENAI_BASE_URL, else OpenAI's); the key
    #: comes from the environment only: CODECITE_LLM_API_KEY or OPENAI_API_KEY.
    llm_base_url: str = ""
    #: Model ``auto`` uses at the configured endpoint ("" = the first a local one lists).
    llm_model: str = ""
    #: Seconds per read (streaming: per piece) and retries of the chat endpoint.
    llm_timeout: float = 60.0
    llm_max_retries: int = 3
    #: Most tokens a model may write for one answer or explanation.
    answer_max_tokens: int = 800
    #: Tokens of retrieved code given to the answer (leaves room for the answer).
    answer_context_tokens: int = 3000
    #: Supporting blocks of an extractive answer (after its lead sentence).
    answer_max_blocks: int = 5
    #: Whether the learnt answer model (answer/data/answer-model.json, trained on
    #: questions mined from 71 open-source projects' docstrings and commit subjects,
    #: validated on projects left out) orders the blocks, decides whether to decline and
    #: how sure an answer is. Off: search's order, nothing is declined, confidence is
    #: "low" (the "search order" baseline every answer figure is reported beside). Its
    #: threshold declines 0.5% of the held-out projects' docstring questions (calibrated
    #: on the 71 training projects in 8 project-disjoint folds, against 7,000 questions
    #: of other projects, 51% of which it declines; 4.3% of their commit questions);
    #: measured on the answer benchmark: 1.1% of answerable and 47% of out-of-scope
    #: questions; on SWE-QA's development split none of the answerable).
    answer_model: bool = True
    #: The order of an answer's blocks, where the hits carry the search model's cosine
    #: the answer model learnt with (else search's): "model" (the model's pick first,
    #: then its order; docs, other non-code hits and documented constants, which it
    #: never learnt to judge, keep their places in search's order), "lead" (its pick
    #: first, then search's order) or "search" (search's). The model's order, held out:
    #: the right definition first +12 points over search on docstring questions, +3 on
    #: commit subjects; in the first three +6 / +5 ("lead": +3 / +1.5). Either way code
    #: comes before tests, and tests before code when the question asks which tests
    #: check something.
    answer_order: str = "model"


@dataclass
class FreshnessConfig:
    """Re-indexing changed files before a query."""

    #: Before each search/ask, find indexed files changed on disk (size + mtime, then
    #: content hash) and re-index up to ``refresh_max_files`` of them inline (keyword
    #: index and graph); beyond that, results from changed files are marked stale.
    refresh: bool = True
    refresh_max_files: int = 20
    #: Seconds between two checks of every file on one open index (a server, a batch;
    #: the result's files are checked every time); 0: every query.
    refresh_interval: float = 1.0


#: The typed sub-configs, by the attribute of :class:`Config` that holds each.
GROUPS: dict[str, type[Any]] = {
    "index": IndexConfig,
    "embed": EmbedConfig,
    "search": SearchConfig,
    "answer": AnswerConfig,
    "freshness": FreshnessConfig,
}
#: Each setting's group ("" for the few of :class:`Config` itself).
_GROUP_OF: dict[str, str] = {
    f.name: group for group, cls in GROUPS.items() for f in dataclasses.fields(cls)
}
#: Settings of :class:`Config` itself, not of a group.
TOP_LEVEL = ("store", "repo_name", "query_log")


@dataclass(init=False)
class Config:
    """Every setting, in typed sub-configs per stage (``config.search.rrf_k``). A
    setting has one name everywhere: its key in ``codecite.toml`` (flat, ``rrf_k =
    60``), its environment variable (``CODECITE_RRF_K``), its keyword here
    (``Config(rrf_k=60)``, ``config.replace(rrf_k=60)``) and its field in its group.
    """

    # --- storage --------------------------------------------------------------
    #: Where the index lives: "" = embedded SQLite in the index folder; a
    #: ``postgresql://USER@HOST/DB`` URL = the shared PostgreSQL + pgvector store (many
    #: repositories in one database, named by ``repo_name``). Env: CODECITE_STORE.
    store: str = ""
    #: Repository name stored in every chunk; "" means the folder name. With a shared
    #: store (PostgreSQL) it is also the repository's name in the database.
    repo_name: str = ""
    #: Append each search/ask to ``<index>/queries.jsonl`` (questions scrubbed of
    #: secrets, pasted values without a key name included).
    query_log: bool = True
    # --- stages ------------------------------------------------------------------
    index: IndexConfig = field(default_factory=IndexConfig)
    embed: EmbedConfig = field(default_factory=EmbedConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    freshness: FreshnessConfig = field(default_factory=FreshnessConfig)

    def __init__(
        self,
        *,
        store: str = "",
        repo_name: str = "",
        query_log: bool = True,
        index: IndexConfig | None = None,
        embed: EmbedConfig | None = None,
        search: SearchConfig | None = None,
        answer: AnswerConfig | None = None,
        freshness: FreshnessConfig | None = None,
        **settings: Any,
    ) -> None:
        unknown = sorted(set(settings) - set(_GROUP_OF))
        if unknown:
            raise TypeError(f"Config() got unknown settings: {', '.join(unknown)}")
        self.store, self.repo_name, self.query_log = store, repo_name, query_log
        given: dict[str, Any] = {
            "index": index,
            "embed": embed,
            "search": search,
            "answer": answer,
            "freshness": freshness,
        }
        for group, cls in GROUPS.items():
            mine = {k: v for k, v in settings.items() if _GROUP_OF[k] == group}
            base = given[group]
            setattr(self, group, dataclasses.replace(base, **mine) if base else cls(**mine))

    def settings(self) -> dict[str, Any]:
        """Every setting by its name (flat, as in ``codecite.toml``)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in TOP_LEVEL}
        for group in GROUPS:
            out.update(dataclasses.asdict(getattr(self, group)))
        return out

    @classmethod
    def field_names(cls) -> list[str]:
        """Every setting's name (the keys of ``codecite.toml``)."""
        return [*TOP_LEVEL, *_GROUP_OF]

    def llm_endpoint(self, environ: Mapping[str, str] | None = None) -> Endpoint:
        """The chat endpoint: ``llm_base_url`` (a file, CODECITE_LLM_BASE_URL or a flag),
        else OPENAI_BASE_URL; the key from the environment."""
        env = os.environ if environ is None else environ
        return Endpoint(
            base_url=(self.answer.llm_base_url or first_env(env, ("OPENAI_BASE_URL",))).rstrip("/"),
            api_key=first_env(env, LLM_API_KEY_ENVS),
            model=self.answer.llm_model,
            timeout=self.answer.llm_timeout,
            max_retries=self.answer.llm_max_retries,
        )

    def embedding_endpoint(self, environ: Mapping[str, str] | None = None) -> Endpoint:
        """The ``openai:MODEL`` embedder's endpoint: ``embed_base_url``, else
        CODECITE_OPENAI_BASE_URL or OPENAI_BASE_URL; the key from the environment."""
        env = os.environ if environ is None else environ
        return Endpoint(
            base_url=(self.embed.embed_base_url or first_env(env, EMBED_BASE_URL_ENVS)).rstrip("/"),
            api_key=first_env(env, EMBED_API_KEY_ENVS),
            timeout=self.embed.embed_timeout,
            max_retries=self.embed.embed_max_retries,
        )

    def replace(self, **changes: Any) -> Config:
        """A copy with some settings changed, by name (``replace(rrf_k=30)``)."""
        return Config(**{**self.settings(), **changes})


#: Settings with a fixed set of values.
CHOICES: dict[str, tuple[str, ...]] = {
    "vector_search": VECTOR_SEARCH_MODES,
    "answer_order": ("model", "lead", "search"),
}


def _defaults() -> dict[str, Any]:
    return Config().settings()


_DEFAULTS = _defaults()


def _coerce(name: str, value: Any, source: str) -> Any:
    """Coerce ``value`` to the type of Config field ``name``."""
    if name in CHOICES and str(value) not in CHOICES[name]:
        raise ConfigError(
            f"{source}: invalid value {value!r} for '{name}' (one of: {', '.join(CHOICES[name])})"
        )
    default = _DEFAULTS[name]
    try:
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        if isinstance(default, list):
            if isinstance(value, str):
                return [v.strip() for v in value.split(",") if v.strip()]
            return [str(v) for v in value]
        return str(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{source}: invalid value {value!r} for '{name}' (expected {type(default).__name__})"
        ) from None


#: Settings of the hand-tuned answer step that the learnt answer model replaced (issue
#: 38): a file or environment that still sets one is read with a warning, not refused.
RETIRED = frozenset(
    {
        "answer_chunks",
        "answer_files",
        "concept_evidence_weight",
        "concept_weight",
        "abstain_soft_name_context",
        "abstain_soft_name_absent",
        "abstain_max_absent",
        "abstain_min_coverage",
        "abstain_min_similarity",
        "abstain_yesno_chunk_share",
        "abstain_yesno_partial_share",
        "abstain_yesno_absent",
        "confidence_high",
        "confidence_medium",
    }
)


def _apply(base: dict[str, Any], values: dict[str, Any], source: str) -> None:
    known = set(Config.field_names())
    for key, value in values.items():
        name = key.replace("-", "_")
        if name in RETIRED:
            log.warning("%s: '%s' no longer does anything (answers are ordered and "
                        "declined by the learnt answer model); remove it", source, key)  # fmt: skip
            continue
        if name not in known:
            choices = ", ".join(sorted(known))
            raise ConfigError(f"{source}: unknown setting '{key}'. Known settings: {choices}")
        base[name] = _coerce(name, value, source)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or remove the file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None


def load_config(
    repo: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Config:
    """Build the Config for a repository: defaults, then files, env, overrides."""
    values: dict[str, Any] = {}
    if repo is not None:
        root = Path(repo)
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            tool = _read_toml(pyproject).get("tool", {}).get("codecite")
            if isinstance(tool, dict):
                _apply(values, tool, str(pyproject))
        own = root / "codecite.toml"
        if own.is_file():
            _apply(values, _read_toml(own), str(own))
    env = os.environ if environ is None else environ
    from_env = {
        key[len(ENV_PREFIX) :].lower(): val
        for key, val in env.items()
        if key.startswith(ENV_PREFIX) and key[len(ENV_PREFIX) :].lower() in Config.field_names()
    }
    _apply(values, from_env, "environment")
    if overrides:
        _apply(values, {k: v for k, v in overrides.items() if v is not None}, "option")
    return Config(**values)
