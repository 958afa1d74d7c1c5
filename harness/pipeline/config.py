"""One arm run's configuration, validated once, and its ``retrieval`` block."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.core import settings
from harness.retrieval.arms import (
    GRANULARITIES,
    MODES,
    SCOPES,
    STAGES,
    FusionSpec,
    fusion_window,
    resolve_fusion,
    single_leg_block,
)
from harness.retrieval.backends import backend_options
from harness.retrieval.backends.tokenizer import DESCRIPTION as TOKENIZER_DESCRIPTION
from harness.core.measures import DEFAULT_MEASURES, resolve
from harness.retrieval.rerank import (
    DEFAULT_FINAL_CHUNKS,
    DEFAULT_MAX_CHUNKS_PER_FILE,
    DEFAULT_RERANK_MAX_PAIRS,
)

DEFAULT_SIZE = 48
DEFAULT_MAX_WORDS = 200
#: one query per retrieval call: every latency sample is one query's (batching raises
#: throughput, but then only batch means exist and the tail percentiles understate)
DEFAULT_QUERY_BATCH = 1
HEADER_TEMPLATE = "{title} | {date} | participants: {roster}"
SCOPE_NOTES = {
    "corpus": "every query searches the whole index (what a deployed system does)",
    "gold-files": "oracle: each query searches only its own gold files; an upper bound, "
                  "not a system result",
}
#: ``--precision``: the model as named, or its certified cheaper profile on this machine
PRECISIONS = ("as-given", "certified")
LEGS_BY_MODE = {"bm25": ("bm25",), "vector": ("dense",), "hybrid": ("bm25", "dense")}


@dataclass(frozen=True)
class ArmConfig:
    corpus_specs: tuple[str, ...]
    out: str
    mode: str = "hybrid"
    stage: str = "retrieve"
    scope: str = "corpus"
    granularity: str = "chunk"
    size: int = DEFAULT_SIZE
    fusion: FusionSpec = field(default_factory=FusionSpec)
    final_chunks: int = DEFAULT_FINAL_CHUNKS
    max_chunks_per_file: int = DEFAULT_MAX_CHUNKS_PER_FILE
    rerank_max_pairs: int = DEFAULT_RERANK_MAX_PAIRS
    reranker: str | None = None
    model: str | None = None
    dim: int | None = None
    query_prefix: str | None = None
    document_prefix: str | None = None
    embed_header: bool = False
    k1: float = 1.2
    b: float = 0.75
    backend: str = "embedded"
    #: the backend's own options (``harness.retrieval.backends.BACKEND_OPTIONS``), sorted
    backend_options: tuple[tuple[str, object], ...] = ()
    workers: int = 1
    query_batch: int = DEFAULT_QUERY_BATCH
    control_name: str | None = None
    compare: str | None = None
    measures: tuple[str, ...] = DEFAULT_MEASURES
    relevance_high: float = 0.5
    relevance_low: float = 0.0
    binary: bool = False
    max_words: int = DEFAULT_MAX_WORDS
    cache_dir: str | None = None
    #: a team store to pull vectors from before embedding (harness.retrieval.embeddings.shared)
    vectors: str | None = None
    #: where torch encoders run: auto | cpu | cuda[:N] (harness.retrieval.embeddings.devices)
    device: str = "auto"
    #: ``as-given`` (the model named) or ``certified`` (the fastest cheaper profile certified
    #: a drop-in for it on this machine: harness.retrieval.embeddings.certified)
    precision: str = "as-given"
    #: the certificate store (default: certificates/ in the cache directory)
    certificates: str | None = None
    #: prepared corpora and BM25 indexes through the on-disk cache (``--no-prepared-cache``)
    prepared_cache: bool = True
    progress: bool = True

    def __post_init__(self):
        for name, value, allowed in (("mode", self.mode, MODES), ("stage", self.stage, STAGES),
                                     ("scope", self.scope, SCOPES),
                                     ("granularity", self.granularity, GRANULARITIES)):
            if value not in allowed:
                raise ValueError(f"unknown --{name} {value!r}; expected one of {sorted(allowed)}")
        if not self.corpus_specs:
            raise ValueError("at least one --corpus KIND:PATH is needed")
        for name in ("size", "final_chunks", "max_chunks_per_file", "rerank_max_pairs",
                     "workers", "query_batch", "max_words"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be a positive integer, "
                                 f"got {value!r}")
        fusion_window(self.size)
        resolve(self.measures)
        from harness.retrieval.embeddings.devices import parse_device

        parse_device(self.device)
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown --precision {self.precision!r}; expected one of "
                             f"{list(PRECISIONS)}")

    @property
    def legs(self) -> tuple[str, ...]:
        return LEGS_BY_MODE[self.mode]

    @property
    def uses_dense(self) -> bool:
        return "dense" in self.legs

    @property
    def leg_depth(self) -> int:
        """Candidates asked of each leg: the fusion window (hybrid) or the request size."""
        return fusion_window(self.size) if self.mode == "hybrid" else self.size

    @property
    def certificate_dir(self) -> Path:
        from harness.retrieval.embeddings.certified import default_store

        return (Path(self.certificates) if self.certificates
                else default_store(self.resolved_cache_dir))

    @property
    def resolved_cache_dir(self) -> Path:
        from harness.retrieval.embeddings.cache import default_cache_dir

        return Path(self.cache_dir) if self.cache_dir else default_cache_dir()

    def name(self) -> str:
        return self.control_name or Path(self.out).name

    def retrieval_block(self, backend_block: dict, reranker_block: dict | None) -> dict:
        """``retrieval`` in metrics.json: everything that distinguishes this arm."""
        block = {
            "backend": backend_block.get("name"),
            "mode": self.mode,
            "legs": list(self.legs),
            "stage": self.stage,
            "scope": self.scope,
            "scope_note": SCOPE_NOTES[self.scope],
            "upper_bound": self.scope == "gold-files",
            "granularity": self.granularity,
            "size": self.size,
            "leg_depth": self.leg_depth,
            "fusion": self.fusion.block(self.size) if self.mode == "hybrid"
            else single_leg_block(self.mode),
            "embed_header": self.embed_header,
            "embed_header_template": HEADER_TEMPLATE if self.embed_header else None,
            "chunking": {"max_words": self.max_words},
        }
        if backend_block.get("system_under_test"):  # one list per query from the system
            kind = backend_block["system_under_test"]["kind"]
            block.update(mode="system", legs=[], leg_depth=None,
                         fusion=single_leg_block(f"system:{kind}"))
            return block
        if backend_block.get("fusion") and self.mode == "hybrid":
            block["fusion"].update(backend_block["fusion"])  # fused by the backend itself
        if "bm25" in self.legs:
            analyzer = (backend_block.get("bm25") or {}).get("analyzer_description")
            block["bm25"] = {"k1": self.k1, "b": self.b, "variant": "lucene",
                             "tokenizer": analyzer or TOKENIZER_DESCRIPTION}
        if self.stage == "rerank":
            block.update({
                "candidate_pool": self.size,
                "final_chunks": self.final_chunks,
                "max_chunks_per_file": self.max_chunks_per_file,
                "rerank_max_pairs": self.rerank_max_pairs,
                "reranker": reranker_block,
                "order_scored": "prompt order after diversity_sample (preserve_order)",
            })
        return block


def _opt_int(value):
    return None if value is None else int(value)


def _default(value, default):
    return default if value is None else value


def from_args(args) -> ArmConfig:
    """An :class:`ArmConfig` from parsed ``harness bench`` arguments."""
    size = args.size
    pool = args.candidate_pool
    if pool is not None:
        if args.stage != "rerank":
            raise ValueError("--candidate-pool applies to --stage rerank only")
        if size is not None and size != pool:
            raise ValueError(f"--size {size} and --candidate-pool {pool} disagree: in the "
                             "rerank stage the candidate pool is the retrieval request size")
        size = pool
    if size is None:
        size = DEFAULT_SIZE
    rerank_flags = {"--final-chunks": args.final_chunks,
                    "--max-chunks-per-file": args.max_chunks_per_file,
                    "--rerank-max-pairs": args.rerank_max_pairs, "--reranker": args.reranker}
    if args.stage != "rerank":
        given = sorted(flag for flag, value in rerank_flags.items() if value is not None)
        if given:
            raise ValueError(f"{', '.join(given)} apply to --stage rerank only")
    fusion_flags = (args.fusion, args.rank_constant, args.normalization_technique,
                    args.combination_technique, args.combination_weights)
    if args.mode != "hybrid" and any(v is not None for v in fusion_flags):
        raise ValueError("fusion flags apply to --mode hybrid only")
    fusion = resolve_fusion(args.fusion, _opt_int(args.rank_constant),
                            args.normalization_technique, args.combination_technique,
                            args.combination_weights)
    if args.mode == "bm25" and (args.embed_header or any(
            v is not None for v in (args.model, args.dim, args.query_prefix,
                                    args.document_prefix))):
        raise ValueError("--model/--dim/--query-prefix/--document-prefix/--embed-header need "
                         "a dense leg (--mode vector or hybrid)")
    if args.mode == "bm25" and getattr(args, "vectors", None):
        raise ValueError("--vectors needs a dense leg (--mode vector or hybrid)")
    reranker = args.reranker
    if args.stage == "rerank" and reranker is None:
        reranker = settings.reranker()
    return ArmConfig(
        corpus_specs=tuple(args.corpus or ()),
        out=args.out,
        mode=args.mode,
        stage=args.stage,
        scope=args.scope,
        granularity=args.granularity,
        size=size,
        fusion=fusion,
        final_chunks=_default(args.final_chunks, DEFAULT_FINAL_CHUNKS),
        max_chunks_per_file=_default(args.max_chunks_per_file, DEFAULT_MAX_CHUNKS_PER_FILE),
        rerank_max_pairs=_default(args.rerank_max_pairs, DEFAULT_RERANK_MAX_PAIRS),
        reranker=reranker,
        model=args.model,
        dim=args.dim,
        query_prefix=args.query_prefix,
        document_prefix=args.document_prefix,
        embed_header=args.embed_header,
        k1=args.k1,
        b=args.b,
        backend=args.backend,
        backend_options=backend_options(args.backend, args),
        workers=args.workers,
        query_batch=_default(args.query_batch, DEFAULT_QUERY_BATCH),
        control_name=args.control_name,
        compare=args.compare,
        measures=tuple(args.measures),
        relevance_high=args.relevance_high,
        relevance_low=args.relevance_low,
        binary=args.binary_relevance,
        max_words=args.max_words,
        cache_dir=args.cache_dir,
        vectors=getattr(args, "vectors", None),
        device=getattr(args, "device", None) or "auto",
        precision=getattr(args, "precision", None) or "as-given",
        certificates=getattr(args, "certificates", None),
        prepared_cache=not getattr(args, "no_prepared_cache", False),
        progress=not args.no_progress,
    )
