"""The source registry: every corpus the product knows, its licence traced to its own terms.

A source declares its provenance as data (ir_datasets style): name, version, artefact URLs with
checksums, licence (an SPDX id where one exists, else a ``LicenseRef-`` id), the evidence the
licence was traced to, citation and role.  Its tier is *derived* from the licence by one rule
(:func:`harness.core.tiers.tier_for_licence`), so it cannot drift from it.

Checksums: a ``sha256`` is written here only when it was verified against the artefact
itself; otherwise it is ``None`` and ``fetch`` records the first download's digest in the
manifest (``--verify`` checks against that).  ``md5`` values are the ones the distributor
publishes (BEIR's dataset table) and are checked on download.

Evidence says where the licence was traced.  Where a platform's metadata disagrees with the
corpus's own terms, the disagreement is recorded in ``platform_metadata`` and ignored.  Which
licence a *loaded copy* is attributed is decided by :mod:`ingestion.attribution`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.core.corpus_names import lookalike_key, refuse_lookalike, registry_key

_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class Artefact:
    """One downloadable file of a source.

    ``sha256`` is ``None`` when it could not be verified when the entry was written: ``fetch``
    then records the digest of the first download in the manifest, and ``--verify`` checks
    against the manifest from then on.  ``md5`` is a checksum the distributor itself
    publishes (checked on download when present).
    """

    url: str
    filename: str
    sha256: str | None = None
    md5: str | None = None
    #: unpack the archive (zip or tar) after the checksum is verified
    extract: bool = False
    note: str | None = None

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"artefact {self.filename!r}: url must be http(s), got {self.url!r}")
        if not self.filename or "/" in self.filename or self.filename.startswith("."):
            raise ValueError(f"artefact of {self.url!r}: bad filename {self.filename!r}")
        if self.sha256 is not None and not _HEX64.match(self.sha256):
            raise ValueError(f"artefact {self.filename!r}: sha256 must be 64 hex digits or None")
        if self.md5 is not None and not _HEX32.match(self.md5):
            raise ValueError(f"artefact {self.filename!r}: md5 must be 32 hex digits or None")


@dataclass(frozen=True)
class Pins:
    """The sha256 of every upstream artefact file of a source at one named upstream revision,
    packaged as data (``sha256sum`` format, paths relative to the upstream root) in
    ``harness/core/pins/``.  A copy's files are attributed the registered licence only when
    their checksums are among these (:mod:`ingestion.evidence`)."""

    #: file name under ``harness/core/pins/``
    file: str
    #: the upstream revision the checksums were taken at (a commit)
    revision: str

    def __post_init__(self) -> None:
        if not self.file or "/" in self.file or self.file.startswith("."):
            raise ValueError(f"pins file {self.file!r}: a plain file name under {PINS_DIR}")
        if not self.revision.strip():
            raise ValueError(f"pins file {self.file!r}: the upstream revision is empty")

    @property
    def path(self) -> Path:
        return PINS_DIR / self.file

    def checksums(self) -> dict[str, str]:
        """``{upstream path: sha256}``, parsed (and checked) once per process."""
        return _read_pins(self.path)


#: where pinned checksums are packaged
PINS_DIR = Path(__file__).resolve().parent / "pins"
_SUMS_LINE = re.compile(r"^([0-9a-f]{64}) [ *](\S.*)$")


@lru_cache(maxsize=None)
def _read_pins(path: Path) -> dict[str, str]:
    sums: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        match = _SUMS_LINE.match(line)
        if match is None:
            raise ValueError(f"{path}:{number}: expected '<sha256>  <path>' (sha256sum format)")
        digest, name = match.groups()
        if name in sums:
            raise ValueError(f"{path}:{number}: path {name!r} listed twice")
        sums[name] = digest
    if not sums:
        raise ValueError(f"{path}: no checksums")
    return sums


@dataclass(frozen=True)
class Source:
    """One registered corpus source.  Its tier follows from ``licence``
    (:func:`harness.core.tiers.source_tier`)."""

    name: str
    title: str
    version: str | None
    licence: str
    #: where the licence was traced (the archive's own LICENSE, the authors' site ...)
    evidence: str
    citation: str
    role: str
    homepage: str | None = None
    artefacts: tuple[Artefact, ...] = ()
    #: directory layout ``fetch --from-dir`` checks: qmsum, beir, trec, synthetic or any
    layout: str = "any"
    #: what relevance judgements the source carries, if any
    judgements: str | None = None
    #: what platform metadata claims, recorded when it disagrees with the licence
    platform_metadata: str | None = None
    #: needs a signed agreement or is not distributed: tier C, recorded and skipped
    unobtainable: bool = False
    #: how to obtain it when there is no direct artefact
    access: str | None = None
    #: pinned sha256 of every upstream artefact file at a named revision: with pins, a
    #: copy's files carry the registered licence only when their checksums match
    pins: Pins | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"source name {self.name!r}: lower-case letters, digits, '.', '-'")
        for field_name in ("title", "licence", "evidence", "citation", "role"):
            if not str(getattr(self, field_name) or "").strip():
                raise ValueError(f"source {self.name!r}: field {field_name!r} is empty")
        if self.layout not in LAYOUTS:
            raise ValueError(f"source {self.name!r}: unknown layout {self.layout!r}; "
                             f"expected one of {sorted(LAYOUTS)}")



LAYOUTS = frozenset({"qmsum", "beir", "trec", "synthetic", "any"})


class UnknownSourceError(KeyError, ValueError):
    """A source name the registry does not hold (message lists the known names)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "unknown source"


# --------------------------------------------------------------------------- entries

QMSUM_COMMIT = "83d7768c1f2b4dfeb091385d3dc7e239b8e5bb7e"
BEIR_BASE = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"
BEIR_CITATION = ("Thakur, Reimers, Rücklé, Srivastava, Gurevych (2021). BEIR: A Heterogeneous "
                 "Benchmark for Zero-shot Evaluation of Information Retrieval Models. "
                 "NeurIPS Datasets and Benchmarks.")
BEIR_HUB_TAG = ("every BeIR/* dataset repository on the dataset hub is tagged cc-by-sa-4.0, "
                "whatever the underlying dataset's terms; BEIR's own README says it does not "
                "claim users have a licence to the datasets it redistributes")

MEETING_SOURCES = (
    Source(
        name="qmsum",
        title="QMSum (query-based multi-domain meeting summarisation)",
        version=QMSUM_COMMIT,
        licence="MIT",
        evidence=("LICENSE file at the root of the Yale-LILY/QMSum repository (MIT); a copy's "
                  "meeting files carry it only when they match the sha256 pinned for the "
                  "upstream commit"),
        citation=("Zhong et al. (2021). QMSum: A New Benchmark for Query-based Multi-domain "
                  "Meeting Summarization. NAACL-HLT 2021."),
        role="backbone of published meeting-retrieval numbers",
        homepage="https://github.com/Yale-LILY/QMSum",
        artefacts=(Artefact(
            url=f"https://github.com/Yale-LILY/QMSum/archive/{QMSUM_COMMIT}.zip",
            filename=f"QMSum-{QMSUM_COMMIT}.zip", extract=True,
            note=("archives of a commit are generated on demand and their bytes are not "
                  "guaranteed stable: the first download's sha256 is recorded in the manifest "
                  "and --verify checks that copy; a clone can be registered with --from-dir")),),
        layout="qmsum",
        judgements="1,576 specific queries with gold turn ranges (relevant_text_span)",
        # every per-meeting JSON file and LICENSE of the repository at QMSUM_COMMIT
        pins=Pins(file="qmsum.SHA256SUMS", revision=QMSUM_COMMIT),
    ),
    Source(
        name="ami",
        title="AMI Meeting Corpus v1.6.2 (original distributor)",
        version="1.6.2",
        licence="CC-BY-4.0",
        evidence=("the original distributor's corpus pages (University of Edinburgh) and the "
                  "licence file shipped inside the v1.6.2 annotation archive: CC BY 4.0"),
        citation=("Carletta et al. (2005). The AMI Meeting Corpus: A Pre-announcement. "
                  "MLMI 2005."),
        role="ingest realism: real word-level timings and speaker channels; no judgements",
        homepage="https://groups.inf.ed.ac.uk/ami/corpus/",
        artefacts=(Artefact(
            url="https://groups.inf.ed.ac.uk/ami/AMICorpusAnnotations/ami_public_manual_1.6.2.zip",
            filename="ami_public_manual_1.6.2.zip", extract=True),),
    ),
    Source(
        name="ami-openslr",
        title="AMI Meeting Corpus, older release on the OpenSLR mirror",
        version="pre-1.6.2 (mirror)",
        licence="LicenseRef-CC-BY-NC-SA",
        evidence=("the OpenSLR mirror (resource 16) serves an older AMI release under a "
                  "CC BY-NC-SA (non-commercial) notice; the licence version was not recorded. "
                  "Registered separately so this copy is never mistaken for v1.6.2 (source 'ami')"),
        citation=("Carletta et al. (2005). The AMI Meeting Corpus: A Pre-announcement. "
                  "MLMI 2005."),
        role="none: listed so the non-commercial mirror is recognised and kept internal",
        homepage="https://www.openslr.org/16/",
        platform_metadata="a mirror's notice for an older release, not the original's terms",
        access="use source 'ami' (the original distributor's CC BY 4.0 release) instead",
    ),
    Source(
        name="icsi",
        title="ICSI Meeting Corpus (annotations)",
        version=None,
        licence="CC-BY-4.0",
        evidence=("the distributor's ICSI corpus page, hosted with the AMI corpus at the "
                  "University of Edinburgh: CC BY 4.0"),
        citation="Janin et al. (2003). The ICSI Meeting Corpus. ICASSP 2003.",
        role="real timings for QMSum's Academic domain; no judgements",
        homepage="https://groups.inf.ed.ac.uk/ami/icsi/",
        access=("download the annotation release from the distributor's page and register "
                "the unpacked directory with --from-dir"),
    ),
    Source(
        name="earnings21",
        title="Earnings-21",
        version=None,
        licence="CC-BY-SA-4.0",
        evidence="the licence statement of the revdotcom/speech-datasets repository: CC BY-SA 4.0",
        citation=("Del Rio et al. (2021). Earnings-21: A Practical Benchmark for ASR in the "
                  "Wild. Interspeech 2021."),
        role="domain realism: real names, sectors, speaker turns (RTTM); no judgements",
        homepage="https://github.com/revdotcom/speech-datasets",
        access="clone the repository and register its earnings21 directory with --from-dir",
    ),
    Source(
        name="meetingbank",
        title="MeetingBank",
        version=None,
        licence="CC-BY-NC-ND-4.0",
        evidence=("LICENSE.txt inside the distributed archive and the authors' dataset site: "
                  "CC BY-NC-ND 4.0"),
        citation=("Hu et al. (2023). MeetingBank: A Benchmark Dataset for Meeting "
                  "Summarization. ACL 2023."),
        role="internal scale testing only (31.7 M words); no judgements",
        homepage="https://meetingbank.github.io/dataset/",
        platform_metadata="the archive host's licence field says cc-by-4.0, contradicting LICENSE.txt",
        access=("download the archive linked from the dataset site and register the unpacked "
                "directory with --from-dir (requires --accept-noncommercial)"),
    ),
    Source(
        name="elitr",
        title="ELITR Minuting Corpus",
        version="1.0",
        licence="LicenseRef-CC-BY-NC-SA",
        evidence=("the corpus's distribution record at LINDAT/CLARIAH-CZ: a CC BY-NC-SA "
                  "(non-commercial) licence; the version was not recorded here"),
        citation=("Nedoluzhko et al. (2022). ELITR Minuting Corpus: A Novel Dataset for "
                  "Automatic Minuting from Multi-Party Meetings in English and Czech. LREC 2022."),
        role="internal only: manual transcript-to-minutes alignments",
        homepage="https://ufal.mff.cuni.cz/elitr-minuting-corpus",
        judgements="manual alignments between transcript lines and minutes",
        access="download from LINDAT and register with --from-dir (requires --accept-noncommercial)",
    ),
)

MULTILINGUAL_SOURCES = (
    Source(
        name="locov1",
        title="LoCoV1 (long-context retrieval)",
        version=None,
        licence="Apache-2.0",
        evidence="the licence stated by the LoCoV1 documents and queries releases: Apache-2.0",
        citation=("Saad-Falcon et al. (2024). Benchmarking and Building Long-Context "
                  "Retrieval Models with LoCo and M2-BERT. ICML 2024."),
        role="long-context retrieval with judgements",
        homepage="https://huggingface.co/datasets/hazyresearch/LoCoV1-Documents",
        judgements="yes",
        access="export to BEIR layout and register with --from-dir",
        layout="beir",
    ),
    Source(
        name="miracl",
        title="MIRACL",
        version=None,
        licence="Apache-2.0",
        evidence="the MIRACL project's repository and release notes: Apache-2.0",
        citation=("Zhang et al. (2023). MIRACL: A Multilingual Retrieval Dataset Covering 18 "
                  "Diverse Languages. TACL."),
        role="multilingual retrieval, 18 languages",
        homepage="https://project-miracl.github.io/",
        judgements="pooled human judgements, with negatives",
        access="export one language to BEIR layout and register with --from-dir",
        layout="beir",
    ),
    Source(
        name="ciral",
        title="CIRAL (cross-lingual retrieval for African languages)",
        version=None,
        licence="Apache-2.0",
        evidence="the CIRAL project's release: Apache-2.0",
        citation=("Adeyemi et al. (2023). CIRAL: A Test Suite for CLIR in African Languages. "
                  "FIRE 2023."),
        role="cross-lingual retrieval, 4 African languages",
        homepage="https://ciralproject.github.io/",
        judgements="pooled human judgements",
        access="export to BEIR or TREC layout and register with --from-dir",
    ),
    Source(
        name="mrtydi",
        title="Mr. TyDi",
        version=None,
        licence="Apache-2.0",
        evidence="the castorini/mr.tydi repository: Apache-2.0",
        citation=("Zhang et al. (2021). Mr. TyDi: A Multi-lingual Benchmark for Dense "
                  "Retrieval. MRL Workshop 2021."),
        role="multilingual retrieval, 11 languages",
        homepage="https://github.com/castorini/mr.tydi",
        judgements="human judgements, positives only",
        access="export one language to BEIR or TREC layout and register with --from-dir",
    ),
    Source(
        name="omnidocbench",
        title="OmniDocBench",
        version=None,
        licence="LicenseRef-research-only",
        evidence=("the dataset card's prose copyright statement: for research purposes only, "
                  "not for commercial use"),
        citation=("Ouyang et al. (2025). OmniDocBench: Benchmarking Diverse PDF Document "
                  "Parsing with Comprehensive Annotations. CVPR 2025."),
        role="internal only: document parsing realism",
        homepage="https://huggingface.co/datasets/opendatalab/OmniDocBench",
        platform_metadata="the dataset hub's licence field is empty; absence is not a licence",
        access="register a local copy with --from-dir (requires --accept-noncommercial)",
    ),
)


def _beir(name: str, md5: str, licence: str, evidence: str, *, title: str, citation: str,
          platform_metadata: str | None = BEIR_HUB_TAG) -> Source:
    return Source(
        name=f"beir-{name}", title=f"BEIR {title}", version="BEIR v1 archive", licence=licence,
        evidence=evidence, citation=f"{citation} Redistributed by: {BEIR_CITATION}",
        role="document retrieval with judgements (zero-shot benchmark)",
        homepage="https://github.com/beir-cellar/beir",
        artefacts=(Artefact(url=f"{BEIR_BASE}/{name}.zip", filename=f"{name}.zip", md5=md5,
                            extract=True, note="md5 as published in BEIR's dataset table"),),
        layout="beir", judgements="qrels/{train,dev,test}.tsv",
        platform_metadata=platform_metadata,
    )


def _untraced(what: str) -> str:
    return (f"not traced to {what}'s own terms: the BEIR copy carries no licence file and the "
            "hub tag is not a licence, so tier B (fail closed) until it is traced")


def _beir_unobtainable(name: str, title: str, why: str) -> Source:
    return Source(
        name=f"beir-{name}", title=f"BEIR {title}", version=None,
        licence="LicenseRef-agreement-required",
        evidence=f"BEIR does not redistribute it: {why}",
        citation=BEIR_CITATION, role="not used: unobtainable without an agreement",
        homepage="https://github.com/beir-cellar/beir", layout="beir", unobtainable=True,
        access=why,
    )


BEIR_SOURCES = (
    _beir("msmarco", "444067daf65d982533ea17ebd59501e4", "LicenseRef-MSMARCO-non-commercial",
          "MS MARCO's own terms: non-commercial research use only",
          title="MS MARCO", citation="Nguyen et al. (2016). MS MARCO."),
    _beir("scifact", "5f7d1de60b170fc8027bb7898e2efca1", "CC-BY-NC-2.0",
          "the allenai/scifact repository's data licence statement: CC BY-NC 2.0",
          title="SciFact", citation="Wadden et al. (2020). Fact or Fiction: Verifying "
          "Scientific Claims. EMNLP 2020."),
    _beir("hotpotqa", "f412724f78b0d91183a0e86805e16114", "CC-BY-SA-4.0",
          "the HotpotQA site: distributed under CC BY-SA 4.0",
          title="HotpotQA", citation="Yang et al. (2018). HotpotQA. EMNLP 2018."),
    _beir("nq", "d4d3d2e48787a744b6f6e691ff534307", "CC-BY-SA-3.0",
          "the google-research-datasets/natural-questions repository: CC BY-SA 3.0",
          title="Natural Questions", citation="Kwiatkowski et al. (2019). Natural Questions. TACL."),
    _beir("trec-covid", "ce62140cb23feb9becf6270d0d1fe6d1", "unknown", _untraced("CORD-19"),
          title="TREC-COVID", citation="Voorhees et al. (2020). TREC-COVID."),
    _beir("nfcorpus", "a89dba18a62ef92f7d323ec890a0d38d", "unknown", _untraced("NFCorpus"),
          title="NFCorpus", citation="Boteva et al. (2016). A Full-Text Learning to Rank "
          "Dataset for Medical Information Retrieval. ECIR 2016."),
    _beir("fiqa", "17918ed23cd04fb15047f73e6c3bd9d9", "unknown", _untraced("FiQA-2018"),
          title="FiQA-2018", citation="Maia et al. (2018). WWW'18 Open Challenge: Financial "
          "Opinion Mining and Question Answering."),
    _beir("arguana", "8ad3e3c2a5867cdced806d6503f29b99", "unknown", _untraced("ArguAna"),
          title="ArguAna", citation="Wachsmuth et al. (2018). Retrieval of the Best "
          "Counterargument without Prior Topic Knowledge. ACL 2018."),
    _beir("webis-touche2020", "46f650ba5a527fc69e0a6521c5a23563", "unknown",
          _untraced("args.me / Touché-2020"), title="Touché-2020",
          citation="Bondarenko et al. (2020). Overview of Touché 2020."),
    _beir("cqadupstack", "4e41456d7df8ee7760a7f866133bda78", "unknown", _untraced("CQADupStack"),
          title="CQADupStack", citation="Hoogeveen et al. (2015). CQADupStack. ADCS 2015."),
    _beir("quora", "18fb154900ba42a600f84b839c173167", "unknown",
          _untraced("the Quora question-pairs release"), title="Quora",
          citation="Quora (2017). First Quora Dataset Release: Question Pairs."),
    _beir("dbpedia-entity", "c2a39eb420a3164af735795df012ac2c", "unknown",
          _untraced("DBpedia-Entity v2"), title="DBpedia-Entity",
          citation="Hasibi et al. (2017). DBpedia-Entity v2. SIGIR 2017."),
    _beir("scidocs", "38121350fc3a4d2f48850f6aff52e4a9", "unknown", _untraced("SCIDOCS"),
          title="SCIDOCS", citation="Cohan et al. (2020). SPECTER. ACL 2020."),
    _beir("fever", "5a818580227bfb4b35bb6fa46d9b6c03", "unknown", _untraced("FEVER"),
          title="FEVER", citation="Thorne et al. (2018). FEVER. NAACL 2018."),
    _beir("climate-fever", "8b66f0a9126c521bae2bde127b4dc99d", "unknown",
          _untraced("Climate-FEVER"), title="Climate-FEVER",
          citation="Diggelmann et al. (2020). CLIMATE-FEVER."),
    _beir_unobtainable("bioasq", "BioASQ", "requires registration with the BioASQ challenge"),
    _beir_unobtainable("signal1m", "Signal-1M", "available from Signal AI on request only"),
    _beir_unobtainable("trec-news", "TREC-NEWS",
                       "the Washington Post collection requires a signed agreement"),
    _beir_unobtainable("robust04", "Robust04", "TREC disks 4 and 5 require a signed agreement"),
)

GENERATED_SOURCES = (
    Source(
        name="synthetic",
        title="Synthetic meeting corpus (this product's deterministic generator)",
        version="1",
        licence="CC0-1.0",
        evidence=("generated by ingestion.synthetic from the product's own word lists with no "
                  "third-party text; its manifest records the seed and declares CC0-1.0"),
        citation="ingestion.synthetic (this product); regenerate with: python -m ingestion synth",
        role="multi_file and aggregation classes, which no public corpus judges",
        layout="synthetic",
        judgements="gold by construction: turn ranges, file sets, answers",
        access="python -m ingestion synth --seed S --meetings N --out DIR",
    ),
)

ALL_SOURCES: tuple[Source, ...] = (
    MEETING_SOURCES + MULTILINGUAL_SOURCES + BEIR_SOURCES + GENERATED_SOURCES
)


def _build() -> dict[str, Source]:
    out: dict[str, Source] = {}
    for source in ALL_SOURCES:
        if source.name in out:
            raise ValueError(f"source {source.name!r} is registered twice")
        out[source.name] = source
    return out


#: Every registered source by name.
SOURCES: dict[str, Source] = _build()


def _by_key(registry: dict[str, Source]) -> dict[str, Source]:
    """The registry keyed by :func:`harness.core.corpus_names.registry_key` (made afresh:
    the registry is a plain dict a caller may extend; each name's key is cached)."""
    return {registry_key(name): source for name, source in registry.items()}


def _find(name: str, registry: dict[str, Source], where: str,
          domains: bool = True) -> Source | None:
    """The entry ``name`` belongs to, compared as :mod:`harness.core.corpus_names` says (case,
    width, dashes and surrounding space do not matter; invisible characters, mixed scripts
    and look-alikes of a registered name are refused).  With ``domains``, a QMSum domain
    corpus (``qmsum-product``) belongs to ``qmsum``."""
    by_key = _by_key(registry)
    for key in dict.fromkeys((registry_key(name, where), lookalike_key(name))):
        found = by_key.get(key)
        if found is None and domains and key.startswith("qmsum-"):
            found = by_key.get("qmsum")
        if found is not None:
            if key != registry_key(name, where):
                refuse_lookalike(name, found.name, where)
            return found
    return None


def lookup(name: str, sources: dict[str, Source] | None = None) -> Source:
    """The registered source ``name``; raises :class:`UnknownSourceError` listing the known ones."""
    registry = SOURCES if sources is None else sources
    found = _find(name, registry, "source name", domains=False)
    if found is None:
        raise UnknownSourceError(
            f"unknown source {name!r}; registered sources: {sorted(registry)}") from None
    return found


def check_corpus_name(name: str, where: str = "corpus name") -> str:
    """``name`` as given, after refusing (CorpusNameError, naming ``where``) a name holding
    an invisible character, mixing scripts or written in look-alike letters of a registered
    name (:mod:`harness.core.corpus_names`)."""
    _find(name, SOURCES, where)
    return name


def source_for_corpus(corpus_name: str, sources: dict[str, Source] | None = None) -> Source | None:
    """The registry entry a loaded corpus belongs to, or None when it is unregistered.

    Names are compared as :func:`harness.core.corpus_names.registry_key` says, so
    ``BEIR-SciFact`` belongs to ``beir-scifact``; a name holding an invisible character,
    mixing scripts or written in look-alike letters is refused (CorpusNameError, a
    ValueError).  A QMSum domain corpus (``qmsum-product``) belongs to ``qmsum``.
    """
    return _find(corpus_name, SOURCES if sources is None else sources, "corpus name")
