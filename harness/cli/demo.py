"""``python -m harness demo``: the product end to end in one command (``make demo``), a
pipeline of steps that each call the product's own entry points and fill every page.

1. corpora: the synthetic meeting corpus (cached by seed), its second configuration
   (:mod:`harness.cli.demo_corpora`: another seed and vocabulary) and the QMSum validation
   split when it lies beside the repository (``../shared/data/qmsum-val``) or
   ``--qmsum-dir`` names it (tier A when every meeting file matches the sha256 the registry
   pins for the upstream commit; a copy with an edited or foreign meeting is tier B, and so
   is every number of the demo: the demo says so);
2. a family of arms, each an :class:`~harness.pipeline.config.ArmConfig` run by
   :func:`~harness.pipeline.run_arm` over the corpora in one index: BM25, dense,
   hybrid RRF at rank constants 60 (the control: the default, not selected explicitly) and
   30, one normalization arm, plus the control at file granularity for a certificate;
3. intervals for every run, every arm's paired test against the control (one document,
   so Holm spans the arms), corpus agreement between two corpora, coverage and risk
   certificates;
4. a tier-B example: the bundled toy run scored under a non-commercial licence;
5. a demo embedding-model migration (``harness migrate``, a derived model, small corpus);
6. the synthetic corpus's aggregation queries answered and scored on the answer
   (``harness answer`` with the ``reference`` answerer and the ``none`` floor);
7. a judging task for the Judge page: a BM25 run's top 10 on the synthetic corpus, pooled;
8. everything into the warehouse, then the dashboard on http://127.0.0.1:8501
   (``--no-serve``: print how to open it instead).

Caches make the second run fast: the synthetic corpora by seed, the embedding cache, the
distilled dense model (once per machine), and arms whose inputs (arm configuration,
corpus checksums, model weights, the harness and ingestion sources) are unchanged are not
run again, nor are the migration and answers runs whose inputs are unchanged (``--force``
reruns them).

The default dense model is the ``minilm-static-256`` profile: a static model distilled once
per machine (model2vec, about two minutes on two cores) from the packaged
all-MiniLM-L6-v2, so the first run fits in minutes on two cores; metrics.json names it with
its weights digest.  ``--model minilm`` uses the transformer itself (embedding QMSum's
~14,000 chunks then takes tens of minutes on two cores).  ``--toy`` keeps the old demo:
score the bundled toy example and print its table.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import shlex
import sys
import time
from pathlib import Path

from harness.cli.demo_steps import judging_task, quietly
from harness.core import settings
from harness.evaluation.results import DEMO_INPUTS

log = logging.getLogger(__name__)

HELP = ("the one-command demo: two synthetic corpora (+ QMSum validation split when present) "
        "-> a family of arms -> intervals, tests, agreement, certificates, a tier-B example, "
        "a migration, answers -> warehouse -> dashboard (--toy: score the bundled toy "
        "example only)")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "toy"
#: where the real QMSum validation split lies on development machines (beside the repository)
QMSUM_BESIDE = REPO.parent / "shared" / "data" / "qmsum-val"

CONTROL = "hybrid-rrf-60"


def _fusion(*args):
    from harness.retrieval.arms import resolve_fusion

    return resolve_fusion(*args)


#: arm name -> (ArmConfig fields, family, axis); the control is the default hybrid (RRF at
#: 60, recorded as not selected explicitly).  A family of None is not compared with the
#: control.  Fusion specs are built when the demo runs (``arm_fields``).
ARMS: dict[str, tuple[dict, str | None, str | None]] = {
    CONTROL: ({"mode": "hybrid"}, None, None),
    "bm25": ({"mode": "bm25"}, "legs", "legs"),
    "dense": ({"mode": "vector"}, "legs", "legs"),
    "hybrid-rrf-30": ({"mode": "hybrid", "fusion": ("rrf", 30, None, None, None)},
                      "fusion", "rank_constant"),
    "hybrid-norm-min_max-arithmetic_mean": (
        {"mode": "hybrid", "fusion": ("normalization", None, "min_max", "arithmetic_mean",
                                      None)}, "fusion", "normalization"),
    f"{CONTROL}-file": ({"mode": "hybrid", "granularity": "file"}, None, None),
}


def arm_fields(fields: dict) -> dict:
    """An arm's ArmConfig fields with its fusion resolved as ``--fusion ...`` would be."""
    out = dict(fields)
    if "fusion" in out:
        out["fusion"] = _fusion(*out["fusion"])
    elif out.get("mode") == "hybrid":
        out["fusion"] = _fusion()
    return out


AGREEMENT_MEASURE = "nDCG@10"
AGREEMENT_CLASSES = ("all", "lookup")
STATIC_MODEL = "minilm-static-256"
#: an arm's inputs, kept in its results directory (replaced with it: never foreign there)
STAMP = DEMO_INPUTS
SEED = 0
#: the answerers run over the synthetic corpus's aggregation queries: the instrument's
#: control and the honest floor (docs/answers.md)
ANSWER_RUNS = ("reference", "none")
#: the tier-B example: the bundled toy run scored as a corpus under a non-commercial licence
TOY_TIER_B = "toy-nc"
TOY_TIER_B_LICENCE = "CC-BY-NC-4.0"
#: the demo migration: the transformer to its first 256 coordinates (a derived model: the
#: base's vectors, truncated), on a sample small enough to stay quick
MIGRATION_OLD = "minilm"
MIGRATION_NEW = "minilm-trunc-256"
MIGRATION_FLAGS = ("--heldout", "30", "--resamples", "1000")
#: meetings of the synthetic corpus the demo migration runs on (the transformer embeds
#: every chunk of it once: about half a minute on two cores)
MIGRATION_MEETINGS = 16
#: the synthetic corpus's second configuration: another seed (and, derived from it in
#: harness.cli.demo_corpora, another vocabulary)
ALT_SEED_OFFSET = 1


def add_arguments(p) -> None:
    p.add_argument("--toy", action="store_true",
                   help="the old demo: score examples/toy and print its table (nothing else)")
    p.add_argument("--out", default=None, help="with --toy: results directory (default: temporary)")
    p.add_argument("--qmsum-dir", default=None, metavar="PATH",
                   help="QMSum validation split (default: ../shared/data/qmsum-val beside the "
                        "repository, when present)")
    p.add_argument("--no-qmsum", action="store_true", help="the synthetic corpus only")
    p.add_argument("--workdir", default="cache/demo",
                   help="caches: corpora, embeddings (default cache/demo; the distilled model is "
                        "kept once per machine: $HARNESS_MODELS)")
    p.add_argument("--results", default="results/demo",
                   help="results directories (default results/demo)")
    p.add_argument("--db", default=None,
                   help="warehouse file (default: $HARNESS_WAREHOUSE or ./warehouse.duckdb)")
    p.add_argument("--model", default="static", metavar="static|NAME|PATH",
                   help="dense model: 'static' (default) distils all-MiniLM-L6-v2 into a static "
                        "model once; a local model2vec directory; or a profile name for "
                        "harness bench --model (e.g. minilm: the transformer, much slower)")
    p.add_argument("--seed", type=int, default=None, help="synthetic corpus seed")
    p.add_argument("--meetings", type=int, default=None, help="synthetic meetings")
    p.add_argument("--force", action="store_true", help="rerun arms even when unchanged")
    p.add_argument("--no-serve", action="store_true", help="fill the warehouse, do not serve")
    p.add_argument("--port", type=int, default=8501, help="dashboard port (default 8501)")


# --------------------------------------------------------------------------- steps


def toy(args) -> int:
    import tempfile

    from harness.cli import main

    out = args.out or str(Path(tempfile.mkdtemp(prefix="harness-demo-")) / "toy")
    return main(["score", "--qrels", str(EXAMPLE / "qrels.txt"), "--run", str(EXAMPLE / "run.txt"),
                 "--query-classes", str(EXAMPLE / "classes.tsv"), "--corpus-name", "toy",
                 "--tier", "A", "--licence", "CC0-1.0", "--out", out, "--no-warehouse"])


def synthetic_corpus(workdir: Path, seed: int | None, meetings: int | None) -> Path:
    """The synthetic corpus for this seed, generated once (byte-identical for one seed)."""
    from ingestion.synthetic import DEFAULT_MEETINGS, DEFAULT_SEED, generate, spec

    seed = DEFAULT_SEED if seed is None else seed
    meetings = DEFAULT_MEETINGS if meetings is None else meetings
    out = workdir / "corpora" / f"synthetic-seed{seed}-m{meetings}"
    if (out / spec.MANIFEST).is_file():
        log.debug("synthetic corpus %s: cached", out)
        return out
    return Path(generate(seed, meetings, out))


def qmsum_corpus(args) -> Path | None:
    if args.no_qmsum:
        return None
    if args.qmsum_dir:
        path = Path(args.qmsum_dir)
        if not path.is_dir():
            raise FileNotFoundError(f"--qmsum-dir {path}: no such directory")
        return path
    return QMSUM_BESIDE if (QMSUM_BESIDE / "data").is_dir() else None


def static_model() -> Path:
    """The ``minilm-static-256`` profile: a model2vec static model distilled from the
    packaged all-MiniLM-L6-v2 (the same model ``harness migrate`` uses), built once per
    machine (``settings.models_dir``), keyed by the base weights' digest."""
    from harness.retrieval.embeddings.profiles import resolve_profile
    from harness.retrieval.embeddings.models import ensure_distilled

    return ensure_distilled(resolve_profile(STATIC_MODEL))


def model_fields(choice: str) -> tuple[dict, str]:
    """ArmConfig fields for the dense leg, and what identifies the model's weights.

    ``static``: the distilled model (built once per machine).  A local model2vec directory:
    its dimension from its config, no prefixes.  Anything else (a profile name such as
    ``minilm``) is the bench's ``model`` as it is.
    """
    from harness.retrieval.embeddings.encoders import weights_sha256

    path = static_model() if choice == "static" else Path(choice)
    if path.is_dir() and (path / "config.json").is_file():
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        if config.get("model_type") == "model2vec":
            dim = config.get("hidden_dim")
            if not isinstance(dim, int) or dim < 1:
                raise ValueError(f"{path / 'config.json'}: field 'hidden_dim': a static model "
                                 f"declares its dimension, got {dim!r}")
            return ({"model": str(path), "dim": dim, "query_prefix": "",
                     "document_prefix": ""}, weights_sha256(path))
    return {"model": choice}, choice


def corpus_sources(specs: list[str]) -> dict:
    """Each corpus's provenance (``ingestion.corpus.SourceInfo``) by name, as loaded."""
    from ingestion import load_corpus

    out = {}
    for spec in specs:
        corpus = load_corpus(spec)
        out[corpus.name] = corpus.source
    return out


def corpus_checksums(specs: list[str]) -> dict[str, str]:
    return {name: source.sha256 for name, source in corpus_sources(specs).items()}


def tier_notes(sources: dict) -> list[str]:
    """What to tell the user about the corpora's tiers: all the demo's arms index every
    corpus together, so one corpus that is not tier A makes every number internal."""
    lines = [f"  {name}: licence {src.licence}, tier {src.tier}"
             for name, src in sorted(sources.items())]
    for name, src in sorted(sources.items()):
        if src.tier != "A":
            lines.append(f"  note: {name} is tier {src.tier} ({src.evidence}); every arm "
                         "indexes all corpora together, so no number of this demo is "
                         "publishable")
    return lines


def code_digest() -> str:
    """sha256 over the harness and ingestion sources: a stored result made by other code is
    not reused (a scoring or loading change must show in the demo's numbers)."""
    import hashlib

    digest = hashlib.sha256()
    for package in ("harness", "ingestion"):
        for path in sorted((REPO / package).rglob("*.py")):
            digest.update(str(path.relative_to(REPO)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def unchanged(out: Path, inputs: dict) -> bool:
    from harness.core.canonical import canonical_json

    stamp = out / STAMP
    needed = ("metrics.json", "per_query.jsonl", "calibration.jsonl")
    if not stamp.is_file() or not all((out / n).is_file() for n in needed):
        return False
    try:
        # compared as JSON: a tuple among the inputs reads back as a list
        return json.loads(stamp.read_text(encoding="utf-8")) == json.loads(canonical_json(inputs))
    except ValueError:
        return False


def run_arm_unless_unchanged(arm: str, fields: dict, corpora: list, specs: list[str],
                             cache_dir: Path, out: Path, inputs: dict, force: bool,
                             progress: bool) -> bool:
    """Run one arm through the pipeline's own entry point (a
    :class:`~harness.pipeline.config.ArmConfig` and
    :func:`~harness.pipeline.run_arm`) over the loaded corpora, unless its results
    exist for these inputs; True when it ran."""
    from harness.core.canonical import canonical_json
    from harness.evaluation.results import check_out_directory
    from harness.pipeline import ArmConfig, run_arm

    if not force and unchanged(out, inputs):
        return False
    (out / STAMP).unlink(missing_ok=True)
    check_out_directory(str(out))
    cfg = ArmConfig(corpus_specs=tuple(specs), out=str(out), control_name=arm,
                    cache_dir=str(cache_dir), progress=progress, **fields)
    run_arm(cfg, corpora)
    (out / STAMP).write_text(canonical_json(inputs), encoding="utf-8")
    return True


def stamped(out: Path, inputs: dict, force: bool, produced: str) -> bool:
    """True when ``out`` holds ``produced`` made from exactly ``inputs`` (kept)."""
    stamp = out / STAMP
    from harness.core.canonical import canonical_json

    try:
        return (not force and (out / produced).is_file() and stamp.is_file()
                and json.loads(stamp.read_text(encoding="utf-8"))
                == json.loads(canonical_json(inputs)))
    except ValueError:
        return False


def toy_tier_b(root: Path) -> Path:
    """The bundled toy run scored as a corpus under a non-commercial licence (tier B:
    internal only), so the dashboard's tier switch visibly withholds something."""
    out = root / TOY_TIER_B
    quietly(["score", "--qrels", str(EXAMPLE / "qrels.txt"), "--run", str(EXAMPLE / "run.txt"),
             "--query-classes", str(EXAMPLE / "classes.tsv"), "--corpus-name", TOY_TIER_B,
             "--licence", TOY_TIER_B_LICENCE, "--out", str(out), "--no-warehouse"])
    intervals(out)
    return out


def migration(root: Path, synthetic: Path, checksum: str, cache_dir: Path, force: bool
              ) -> tuple[Path, bool]:
    """A demo embedding-model migration (``harness migrate``) on the synthetic corpus:
    MIGRATION_OLD -> MIGRATION_NEW, a derived model that needs only the base's vectors, on a
    small sample so it stays quick.  Returns migration.json and whether it ran."""
    from harness.core.canonical import canonical_json

    out = root / "migration"
    inputs = {"old": MIGRATION_OLD, "new": MIGRATION_NEW, "flags": list(MIGRATION_FLAGS),
              "corpus": checksum, "code": code_digest()}
    if stamped(out, inputs, force, "migration.json"):
        return out / "migration.json", False
    (out / STAMP).unlink(missing_ok=True)
    quietly(["migrate", "--old", MIGRATION_OLD, "--new", MIGRATION_NEW, "--corpus",
             f"synthetic:{synthetic}", *MIGRATION_FLAGS, "--cache-dir", str(cache_dir),
             "--out", str(out), "--no-warehouse"])
    (out / STAMP).write_text(canonical_json(inputs), encoding="utf-8")
    return out / "migration.json", True


def intervals(out: Path) -> None:
    """intervals.json beside metrics.json (the same as ``python -m harness intervals DIR``)."""
    from harness.claims.metrics import PER_QUERY
    from harness.evaluation.results import load_metrics, load_per_query
    from harness.claims import IntervalsClaim, write_claim as write_document

    INTERVALS_JSON = IntervalsClaim.RESULTS_FILE
    from harness.stats.intervals import row_intervals

    target = out / INTERVALS_JSON
    if target.is_file() and target.stat().st_mtime >= (out / "metrics.json").stat().st_mtime:
        return
    doc = row_intervals(load_metrics(out), load_per_query(out), seed=SEED,
                        source=str(out / PER_QUERY))
    write_document(target, doc)


def comparisons(root: Path, runs: dict[str, Path]) -> Path:
    """Every arm of a family against the control in one document (Holm spans them)."""
    from harness.claims import write_claim as write_document
    from harness.evaluation.runs import compare_runs

    arms = [runs[a] for a, (_, family, _) in ARMS.items() if family is not None]
    doc = compare_runs(runs[CONTROL], arms, seed=SEED)
    return write_document(root / "comparisons.json", doc)


def agreement_documents(root: Path, runs: dict[str, Path], corpora: list[str]) -> list[Path]:
    """The manifest of the demo's families and one agreement document per class."""
    from harness.evaluation.manifests import arms_from_manifest
    from harness.stats.agreement import agreement
    from harness.claims import write_claim as write_document
    from harness.claims.agreement import MANIFEST_KIND
    from harness.evaluation.manifests import write_manifest

    families: dict[str, list[dict]] = {}
    for arm, (_, family, axis) in ARMS.items():
        if family is not None:
            families.setdefault(family, []).append(
                {"name": arm, "run": runs[arm].name, "axis": axis})
    manifest = {"kind": MANIFEST_KIND, "measure": AGREEMENT_MEASURE, "corpora": corpora,
                "families": [{"name": name, "control": runs[CONTROL].name, "arms": arms}
                             for name, arms in sorted(families.items())]}
    path = root / "agreement-manifest.json"
    write_manifest(path, manifest)
    out = []
    for cls in AGREEMENT_CLASSES:
        arms, pair, measure = arms_from_manifest(manifest, root, query_class=cls)
        doc = agreement(arms, pair, measure=measure, query_class=cls)
        out.append(write_document(root / f"agreement-{cls}.json", doc))
    return out


def certificates(root: Path, runs: dict[str, Path]) -> list[Path]:
    """Coverage certificates of the control (chunks) and of its file-granularity twin, and
    a risk certificate of the latter (alpha 0.1; target 0.1 at delta 0.1; seed 0)."""
    from harness.certificates.build import build_coverage_certificate, build_risk_certificate
    from harness.evaluation.runs import load_pool
    from harness.claims import write_claim as write_document

    out = []
    for arm in (CONTROL, f"{CONTROL}-file"):
        pool = load_pool([runs[arm]])
        doc = build_coverage_certificate(pool, alpha=0.1, seed=SEED)
        out.append(write_document(root / f"certificate-coverage-{arm}.json", doc))
    pool = load_pool([runs[f"{CONTROL}-file"]])
    doc = build_risk_certificate(pool, target=0.1, delta=0.1, seed=SEED, context_k=10)
    out.append(write_document(root / f"certificate-risk-{CONTROL}-file.json", doc))
    return out


def answers(root: Path, synthetic: Path, checksum: str, store: Path, force: bool
            ) -> tuple[list[Path], list[str]]:
    """answers.json of each demo answerer over the synthetic corpus (``python -m harness
    answer``, transcript store ``store``), unless its answerer and corpus checksum are
    unchanged.  Returns the documents and the answerers that ran."""
    from harness.claims.answers import ANSWERS_JSON
    from harness.core.canonical import canonical_json

    documents, ran = [], []
    for name in ANSWER_RUNS:
        out = root / f"answers-{name}"
        inputs = {"answerer": name, "corpus": checksum, "code": code_digest()}
        stamp = out / STAMP
        documents.append(out / ANSWERS_JSON)
        try:
            kept = (not force and (out / ANSWERS_JSON).is_file() and stamp.is_file()
                    and json.loads(stamp.read_text(encoding="utf-8")) == inputs)
        except ValueError:
            kept = False
        if kept:
            continue
        stamp.unlink(missing_ok=True)
        quietly(["answer", "--corpus", f"synthetic:{synthetic}", "--answerer", name,
                 "--store-url", f"sqlite:///{store}", "--out", str(out), "--no-warehouse"])
        stamp.write_text(canonical_json(inputs), encoding="utf-8")
        ran.append(name)
    return documents, ran


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def serve(db: Path, port: int) -> int:
    """``streamlit run app.py`` on 127.0.0.1:port, reading ``db``, until Ctrl-C."""
    if not port_free(port):
        raise ValueError(f"port {port} on 127.0.0.1 is in use (another dashboard?); "
                         "pass --port N or --no-serve")
    env = {**os.environ, settings.WAREHOUSE: str(db)}
    command = [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"),
               "--server.address", "127.0.0.1", "--server.port", str(port),
               "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    print(f"\ndashboard: http://127.0.0.1:{port}  (reading {db}; Ctrl-C stops it)", flush=True)
    child = subprocess.Popen(command, cwd=REPO, env=env)

    def stop(signum, frame):  # SIGTERM stops the dashboard too, as Ctrl-C does
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


# --------------------------------------------------------------------------- the command


def serve_hint(db: Path, port: int) -> str:
    """How to open the dashboard on this warehouse later (what ``--no-serve`` ends with)."""
    # the interpreter running now (the virtualenv's), so the line works without activating it
    return (f"open the dashboard: {settings.WAREHOUSE}={shlex.quote(str(db))} "
            f"{shlex.quote(sys.executable)} -m streamlit run "
            f"{shlex.quote(str(REPO / 'app.py'))} --server.address 127.0.0.1 "
            f"--server.port {port}"
            f"\n  then http://127.0.0.1:{port}  (or rerun the demo without --no-serve)")


class Steps:
    """One line per step of the pipeline, numbered (``demo [3/9] arms: ...``) on stderr."""

    def __init__(self, names: list[str]):
        self.names, self.done = names, 0

    def __call__(self, name: str, detail: str) -> None:
        self.done += 1
        print(f"demo [{self.done}/{len(self.names)}] {name}: {detail}", file=sys.stderr,
              flush=True)


def load_corpora(specs: list[str], synthetic_alt: Path) -> list:
    """The demo's corpora, loaded once for every arm: the synthetic corpus (and QMSum),
    then the second synthetic configuration (``harness.cli.demo_corpora``)."""
    from harness.cli.demo_corpora import alternate_corpus
    from ingestion import load_corpus

    return [load_corpus(spec) for spec in specs] + [alternate_corpus(synthetic_alt)]


def run(args) -> int:
    if args.toy:
        return toy(args)
    from harness.cli.demo_corpora import NAME as ALT_NAME
    from harness.cli.summary import measure
    from ingestion.synthetic import DEFAULT_SEED
    from warehouse import ingest_document, ingest_judging, ingest_results

    started = time.monotonic()
    settings.go_offline()
    workdir = Path(args.workdir).absolute()
    db = Path(args.db or settings.warehouse_path()).absolute()
    qmsum = qmsum_corpus(args)
    steps = Steps(["corpora", "model", "arms", "statistics", "tier-B example", "migration",
                   "answers", "judging task", "warehouse"])

    seed = DEFAULT_SEED if args.seed is None else args.seed
    synthetic = synthetic_corpus(workdir, seed, args.meetings)
    synthetic_alt = synthetic_corpus(workdir, seed + ALT_SEED_OFFSET, args.meetings)
    specs = [f"synthetic:{synthetic}"] + ([f"qmsum:{qmsum}"] if qmsum else [])
    corpora = load_corpora(specs, synthetic_alt)
    sources = {c.name: c.source for c in corpora}
    checksums = {name: src.sha256 for name, src in sources.items()}
    root = Path(args.results).absolute() / "+".join(sorted(checksums))
    steps("corpora", ", ".join(f"{n} ({s[:12]})" for n, s in sorted(checksums.items()))
          + ("" if qmsum else "; QMSum not used (--no-qmsum)" if args.no_qmsum else
             "; QMSum validation split not found (--qmsum-dir PATH adds it)"))
    for line in tier_notes(sources):
        print(line, file=sys.stderr)

    dense, weights = model_fields(args.model)
    steps("model", f"dense leg {dense['model']}")

    cache_dir = workdir / "embeddings"
    code = code_digest()
    runs, ran = {}, []
    first_dense = True
    for arm, (fields, _, _) in ARMS.items():
        fields = arm_fields(fields)
        uses_dense = fields["mode"] != "bm25"
        config = {**fields, **(dense if uses_dense else {})}
        # what makes a stored result reusable: the arm, the corpora, the weights, the code
        inputs = {"arm": arm, "config": _plain(config), "corpora": checksums,
                  "model": weights if uses_dense else None, "code": code}
        runs[arm] = root / arm
        # the first dense arm embeds the corpora: its estimate and bar are worth showing
        if run_arm_unless_unchanged(arm, config, corpora, specs, cache_dir, runs[arm], inputs,
                                    args.force, progress=uses_dense and first_dense):
            ran.append(arm)
        first_dense = first_dense and not uses_dense
    headline = _headline(runs[CONTROL], measure)
    steps("arms", f"{len(ran)} run, {len(runs) - len(ran)} unchanged; control {CONTROL}: "
          f"{headline}")

    for out in runs.values():
        intervals(out)
    documents = [comparisons(root, runs)]
    pair = ["qmsum", "synthetic"] if qmsum else ["synthetic", ALT_NAME]
    documents += agreement_documents(root, runs, pair)
    documents += certificates(root, runs)
    steps("statistics", f"intervals for {len(runs)} runs, one Holm family against {CONTROL}, "
          f"agreement {pair[0]} vs {pair[1]}, {len(CERTIFICATES)} certificates")

    toy_run = toy_tier_b(root)
    steps("tier-B example", f"{TOY_TIER_B} ({TOY_TIER_B_LICENCE}: tier B, internal view only)")

    synthetic_sha256 = checksums["synthetic"]
    small = synthetic_corpus(workdir, seed, MIGRATION_MEETINGS)
    (small_sha256,) = corpus_checksums([f"synthetic:{small}"]).values()
    migration_doc, migrated = migration(root, small, small_sha256, cache_dir, args.force)
    documents.append(migration_doc)
    steps("migration", f"{MIGRATION_OLD} -> {MIGRATION_NEW} "
          f"({'run' if migrated else 'unchanged'})")

    answer_docs, answered = answers(root, synthetic, synthetic_sha256,
                                    workdir / "transcripts.sqlite", args.force)
    documents += answer_docs
    steps("answers", f"{len(answered)} run, {len(ANSWER_RUNS) - len(answered)} unchanged")
    task = judging_task(workdir, synthetic, cache_dir)
    steps("judging task", f"{task} (the Judge page)")

    stored = 0
    for out in [*runs.values(), toy_run]:
        stored += ingest_results(out, db).inserted
    for doc in documents:
        stored += ingest_document(doc, db).inserted
    stored += ingest_judging(task, db).inserted
    steps("warehouse", f"{stored} new item(s) in {db}")
    print(f"demo: {len(ran)} arm(s) run, {len(runs) - len(ran)} unchanged; {stored} new "
          f"item(s) in {db}; {time.monotonic() - started:.0f} s; answers: "
          f"{len(answered)} run, {len(ANSWER_RUNS) - len(answered)} unchanged", flush=True)
    if args.no_serve:
        print(serve_hint(db, args.port), flush=True)
        return 0
    return serve(db, args.port)


#: the certificates the demo builds (``certificates``)
CERTIFICATES = (f"coverage {CONTROL}", f"coverage {CONTROL}-file", f"risk {CONTROL}-file")


def _plain(config: dict) -> dict:
    """Config fields as JSON (a fusion spec as its fields)."""
    import dataclasses

    return {k: (dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v)
            for k, v in sorted(config.items())}


def _headline(out: Path, measure) -> str:
    from harness.evaluation.results import load_metrics

    rows = [r for r in load_metrics(out)["rows"] if r["query_class"] == "all"]
    return ", ".join(f"{r['corpus']} nDCG@10 {measure(r['metrics'].get('nDCG@10'))}"
                     for r in rows)
