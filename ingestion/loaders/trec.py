"""TREC-style collections: topics, qrels and a documents JSONL in one folder.

Files looked for in PATH (first match wins):

- documents: ``docs.jsonl``, ``documents.jsonl`` or ``corpus.jsonl``; one object per line with an
  id (``doc_id``, ``docno``, ``_id`` or ``id``), ``text`` (or ``contents``/``body``) and an
  optional ``title``;
- topics: ``topics.tsv`` (``query_id<TAB>text``), ``topics.jsonl`` (``query_id``/``qid``/``_id``/
  ``id`` and ``text``/``title``/``query``), or ``topics.txt``/``topics.xml``/``topics`` in the
  classic SGML form (``<top><num> Number: 301 <title> ...``) or the XML form
  (``<topic number="1"><query>...</query>``); the query text is the title/query field;
- qrels: ``qrels.txt``, ``qrels.trec`` or ``qrels`` (``query_id iteration doc_id relevance``).

The corpus is named ``trec-<folder>``; unregistered (or registered as publishable without
evidence tied to its files), it gets licence ``unknown``, tier B.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from harness.core.formats import FormatError, read_jsonl, read_trec_qrels, require_field
from ingestion.corpus import Corpus, Document
from ingestion.loaders.beir import build_document_corpus, dataset_name, read_query_texts

DOC_FILES = ("docs.jsonl", "documents.jsonl", "corpus.jsonl")
TOPIC_FILES = ("topics.tsv", "topics.jsonl", "topics.txt", "topics.xml", "topics")
QRELS_FILES = ("qrels.txt", "qrels.trec", "qrels")
DOC_ID_FIELDS = ("doc_id", "docno", "_id", "id")
DOC_TEXT_FIELDS = ("text", "contents", "body")


def _first(folder: Path, names, what: str) -> Path:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{folder}: no {what} file; expected one of {list(names)}")


def resolve_trec(path) -> tuple[Path, Path, Path, Path]:
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such TREC collection folder")
    return (folder, _first(folder, DOC_FILES, "documents"), _first(folder, TOPIC_FILES, "topics"),
            _first(folder, QRELS_FILES, "qrels"))


def _read_docs(path: Path) -> tuple[Document, ...]:
    from tqdm import tqdm

    docs: dict[str, Document] = {}
    for line, obj in tqdm(read_jsonl(path), desc=f"reading {path.name}", unit="doc", disable=None):
        id_field = next((f for f in DOC_ID_FIELDS if f in obj), DOC_ID_FIELDS[0])
        doc_id = require_field(obj, id_field, path, line)
        if doc_id in docs:
            raise FormatError(path, line, id_field, f"duplicate document id {doc_id!r}")
        text_field = next((f for f in DOC_TEXT_FIELDS if f in obj), None)
        if text_field is None:
            raise FormatError(path, line, "text", f"missing; expected one of {list(DOC_TEXT_FIELDS)}")
        text, title = obj[text_field], obj.get("title", "")
        if not isinstance(text, str):
            raise FormatError(path, line, text_field, f"expected a string, got {text!r}")
        if not isinstance(title, str):
            raise FormatError(path, line, "title", f"expected a string, got {title!r}")
        docs[doc_id] = Document(doc_id, title, text)
    return tuple(docs[d] for d in sorted(docs))


_SGML_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_SGML_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_SGML_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<[a-z/]|\Z)", re.S | re.I)
_XML_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_XML_NUMBER = re.compile(r"""number\s*=\s*["']([^"']+)["']""", re.I)
_XML_QUERY = re.compile(r"<(query|title)>(.*?)</\1>", re.S | re.I)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def read_topics(path: Path) -> dict[str, str]:
    """Query texts from a topics file in any supported form (module docstring)."""
    if path.suffix == ".jsonl":
        return read_query_texts(path, ("query_id", "qid", "_id", "id"), ("text", "title", "query"))
    text = path.read_text(encoding="utf-8")
    out: dict[str, str] = {}
    if path.suffix == ".tsv":
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            parts = raw.split("\t")
            if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
                raise FormatError(path, number, None, "expected 'query_id<TAB>text'")
            query_id = parts[0].strip()
            if query_id in out:
                raise FormatError(path, number, "query_id", f"duplicate query id {query_id!r}")
            out[query_id] = parts[1].strip()
        if not out:
            raise FormatError(path, None, None, "empty file: no topics")
        return out
    blocks = [(m.start(), m.group(1), None) for m in _SGML_TOP.finditer(text)]
    blocks += [(m.start(), m.group(2), m.group(1)) for m in _XML_TOPIC.finditer(text)]
    if not blocks:
        raise FormatError(path, None, None, "no <top> or <topic> blocks found")
    for offset, body, attrs in blocks:
        line = _line_of(text, offset)
        if attrs is None:
            num, title = _SGML_NUM.search(body), _SGML_TITLE.search(body)
            query_id = num.group(1) if num else None
            query = title.group(1) if title else None
        else:
            num, title = _XML_NUMBER.search(attrs), _XML_QUERY.search(body)
            query_id = num.group(1) if num else None
            query = title.group(2) if title else None
        if not query_id:
            raise FormatError(path, line, "num", "topic without a number")
        query = " ".join(html.unescape(query or "").split())
        if not query:
            raise FormatError(path, line, "title", f"topic {query_id!r} has no title/query text")
        if query_id in out:
            raise FormatError(path, line, "num", f"duplicate topic number {query_id!r}")
        out[query_id] = query
    return out


def load_trec(path, name: str | None = None) -> Corpus:
    folder, docs_path, topics_path, qrels_path = resolve_trec(path)
    corpus_name = name or dataset_name(folder, "trec")
    documents = _read_docs(docs_path)
    judgements = read_trec_qrels(qrels_path).judgements
    texts = read_topics(topics_path)
    return build_document_corpus(corpus_name, documents, judgements, texts, qrels_path,
                                 root=folder, notes={"topics_file": topics_path.name})
