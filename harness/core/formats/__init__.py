"""Readers and writers for TREC qrels, TREC runs, BEIR qrels TSV and JSONL: one module per
format family (:mod:`.trec`, :mod:`.beir`, :mod:`.jsonl`, with :mod:`.json_files` for JSON
and JSONL files in general) over :mod:`.base`, plus :mod:`.writers`.

Every reader is strict: a bad line raises :class:`FormatError` naming the file, the line
and the field, before anything is returned.  Duplicate ``(query_id, doc_id)`` pairs, NaN
or infinite scores, non-integer relevance and empty files are all refused, and so are:

* relevance labels outside :data:`RELEVANCE_MIN` .. :data:`RELEVANCE_MAX` (trec_eval
  keeps labels in a C ``long`` and its pytrec_eval binding in an ``int``: larger labels
  silently zero every measure or crash the engine);
* scores written as integers beyond +-2^53 (:data:`EXACT_INTEGER`), which no double holds
  exactly, so distinct scores would tie (a decimal such as ``1e30`` reads as the nearest
  double, and one that overflows to infinity is refused);
* rank fields of more than 18 digits, JSON nested too deeply to read, and numbers too long
  to convert: each named by file and line.

How they are fast: a qrels file is read whole, a run or a JSONL file in blocks of lines
(what one block leaves behind is reused by the next, see :class:`_RunBlocks`), and
checked a column at a time; only when a check fails is it read again line by line
(``_located_*``), which finds the first bad line and names it.  JSONL blocks and a TREC
run's scores are read by orjson where it can (:mod:`harness.core.fast_json`), which gives
the standard decoder's values wherever the readers use it.  A result therefore comes
only from input that the line-by-line reader accepts too.  The garbage collector is
paused while a file's records are built (:func:`gc_paused`): they hold no reference cycles,
and a collection every few hundred new containers costs more than the parsing itself.
"""

from harness.core.formats.any_format import read_qrels, read_run, read_run_columns
from harness.core.formats.base import (
    EXACT_INTEGER,
    RANK_DIGITS,
    RELEVANCE_MAX,
    RELEVANCE_MIN,
    FormatError,
    QrelsFile,
    gc_paused,
    parse_relevance,
    parse_score,
    read_lines,
)
from harness.core.formats.beir import BEIR_QRELS_HEADER, read_beir_qrels
from harness.core.formats.json_files import read_json_object, read_jsonl, require_field
from harness.core.formats.jsonl import read_jsonl_qrels, read_jsonl_run
from harness.core.formats.trec import read_trec_qrels, read_trec_run
from harness.core.formats.writers import (
    trec_qrels_text,
    trec_run_text,
    write_beir_qrels,
    write_jsonl,
    write_trec_qrels,
    write_trec_run,
)

__all__ = [
    "BEIR_QRELS_HEADER",
    "EXACT_INTEGER",
    "RANK_DIGITS",
    "RELEVANCE_MAX",
    "RELEVANCE_MIN",
    "FormatError",
    "QrelsFile",
    "gc_paused",
    "parse_relevance",
    "parse_score",
    "read_beir_qrels",
    "read_json_object",
    "read_jsonl",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_lines",
    "read_qrels",
    "read_run",
    "read_run_columns",
    "read_trec_qrels",
    "read_trec_run",
    "require_field",
    "trec_qrels_text",
    "trec_run_text",
    "write_beir_qrels",
    "write_jsonl",
    "write_trec_qrels",
    "write_trec_run",
]
