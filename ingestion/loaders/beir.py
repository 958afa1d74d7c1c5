"""BEIR datasets: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

PATH is the dataset folder (the split is ``test`` when ``qrels/test.tsv`` exists, else the
only qrels file) or one qrels file inside it (``scifact/qrels/dev.tsv`` selects ``dev``).
Only queries judged in the chosen split are loaded; their judgements become ``gold_docs``
(labels as given, including 0 and negatives) and their positively judged documents
``gold_files``.  The corpus is named ``beir-<folder>`` and matched to the registry by that
name, but a registered publishable licence is attributed only with evidence tied to the
files (a fetch manifest whose digest matches, or a licence file in the dataset folder
naming it: :func:`ingestion.attribution.source_info`); an unregistered or unproven dataset
gets licence ``unknown``, tier B.  Query and document ids are
kept exactly as BEIR publishes them, so external runs score directly.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.core.formats import FormatError, read_beir_qrels, read_jsonl, require_field
from harness.core.records import Query
from ingestion.corpus import DOCUMENTS, Corpus, Document
from ingestion.digest import corpus_sha256
from ingestion.attribution import source_info


def dataset_name(folder: Path, prefix: str) -> str:
    """``prefix-<folder name>``, lower-cased, with anything but [a-z0-9.-] made '-'."""
    slug = re.sub(r"[^a-z0-9.-]+", "-", folder.resolve().name.lower()).strip("-.")
    if not slug:
        raise ValueError(f"{folder}: cannot derive a corpus name from the folder name")
    return f"{prefix}-{slug}"


def resolve_beir(path) -> tuple[Path, Path, str]:
    """``(dataset_folder, qrels_file, split)`` for a BEIR PATH."""
    path = Path(path)
    if path.is_file():
        if path.suffix != ".tsv" or path.parent.name != "qrels":
            raise FileNotFoundError(f"{path}: expected a dataset folder or a qrels/<split>.tsv file")
        return path.parent.parent, path, path.stem
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such BEIR dataset folder")
    for required in ("corpus.jsonl", "queries.jsonl"):
        if not (path / required).is_file():
            raise FileNotFoundError(f"{path}: missing {required} (BEIR layout: corpus.jsonl, "
                                    "queries.jsonl, qrels/<split>.tsv)")
    qrels = sorted((path / "qrels").glob("*.tsv")) if (path / "qrels").is_dir() else []
    if not qrels:
        raise FileNotFoundError(f"{path}: no qrels/<split>.tsv file")
    chosen = path / "qrels" / "test.tsv"
    if not chosen.is_file():
        if len(qrels) > 1:
            raise ValueError(f"{path}: no qrels/test.tsv and several splits "
                             f"{[q.stem for q in qrels]}; name one: beir:{path}/qrels/<split>.tsv")
        chosen = qrels[0]
    return path, chosen, chosen.stem


def _read_documents(path: Path) -> tuple[Document, ...]:
    from tqdm import tqdm

    docs: dict[str, Document] = {}
    for line, obj in tqdm(read_jsonl(path), desc=f"reading {path.name}", unit="doc", disable=None):
        doc_id = require_field(obj, "_id", path, line)
        if doc_id in docs:
            raise FormatError(path, line, "_id", f"duplicate document id {doc_id!r}")
        title, text = obj.get("title", ""), obj.get("text", "")
        if not isinstance(title, str):
            raise FormatError(path, line, "title", f"expected a string, got {title!r}")
        if not isinstance(text, str):
            raise FormatError(path, line, "text", f"expected a string, got {text!r}")
        docs[doc_id] = Document(doc_id, title, text)
    return tuple(docs[d] for d in sorted(docs))


def read_query_texts(path: Path, id_fields=("_id",), text_fields=("text",)) -> dict[str, str]:
    out: dict[str, str] = {}
    for line, obj in read_jsonl(path):
        id_field = next((f for f in id_fields if f in obj), id_fields[0])
        query_id = require_field(obj, id_field, path, line)
        text_field = next((f for f in text_fields if f in obj), text_fields[0])
        text = require_field(obj, text_field, path, line)
        if query_id in out:
            raise FormatError(path, line, id_field, f"duplicate query id {query_id!r}")
        out[query_id] = text
    return out


def build_document_corpus(name: str, documents, judgements: dict[str, dict[str, int]],
                          texts: dict[str, str], qrels_path, *, root, version=None,
                          notes=()) -> Corpus:
    """A document corpus from documents, judgements and query texts (BEIR and TREC share
    it); ``root`` is the dataset folder its licence evidence is looked for in."""
    missing = sorted(q for q in judgements if q not in texts)
    if missing:
        raise FormatError(qrels_path, None, "query_id",
                          f"{len(missing)} judged queries have no text, e.g. {missing[:5]}")
    queries = tuple(
        Query(query_id=q, text=texts[q], query_class=None, corpus=name,
              gold_docs=tuple(sorted(judgements[q].items())),
              gold_files=tuple(sorted(d for d, r in judgements[q].items() if r > 0)))
        for q in sorted(judgements)
    )
    sha = corpus_sha256(DOCUMENTS, (), (), documents, queries)
    info = source_info(name, sha, root=root, version=version)
    notes = dict(notes)
    notes["queries_without_judgements_skipped"] = len(texts) - len(judgements)
    return Corpus(source=info, kind=DOCUMENTS, documents=tuple(documents), queries=queries,
                  notes=tuple(sorted(notes.items())))


def load_beir(path, name: str | None = None) -> Corpus:
    folder, qrels_path, split = resolve_beir(path)
    corpus_name = name or dataset_name(folder, "beir")
    documents = _read_documents(folder / "corpus.jsonl")
    judgements = read_beir_qrels(qrels_path).judgements
    texts = read_query_texts(folder / "queries.jsonl")
    return build_document_corpus(corpus_name, documents, judgements, texts, qrels_path,
                                 root=folder, notes={"split": split})
