"""Builders for the fuzzed reader tests (``test_formats_fast``, ``test_formats_blocks``):
generated files of valid and adversarial lines, and :func:`agree`, which checks a new
reader against the previous one (``formats_reference.py``) line for line and error for
error (the rules are in ``test_formats_fast``'s docstring)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from harness.core import formats

FUZZ = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_DIR = Path(tempfile.mkdtemp(prefix="formats-fast-"))

IDS = ["q1", "q2", "q3", "d1", "d2", "d3", "Q0", "x_1", "é", "日本", "0", "-1", "M001_3",
       "M001_digest", "a\u00a0b", "a\x1cb", "a\tb", "a b", "%s", "\\", '"']
RANKS = ["1", "2", "3", "+3", "-1", "0", "007", "1.0", "1_0", "٣", "x", "9" * 18,
         "0" * 30 + "5", "10", "2"]
SCORES = ["0.5", "-0.25", "1e-5", "1E5", "nan", "NaN", "inf", "-Infinity", "1e400",
          "0x1p3", "1_0", "١.٥", "abc", "-0", "+.5", "5.", "9007199254740992", "123",
          "0.1", "0.9", "0.7", "1e308", "-9007199254740992", "00000000000000000000001"]
LABELS = ["0", "1", "2", "-1", "3", "+2", "1.0", "1_0", "x", "٣", "2147483647",
          "-2147483648", "0000000000001", "00000000000000000000000002"]
RANK_TRIGGERS = ["1" * 19, "-" + "9" * 25, "1" * 5000]
LABEL_TRIGGERS = ["2147483648", "4294967295", "-2147483649", "9" * 30, "1" * 5000,
                  "18446744073709551616"]
SCORE_TRIGGERS = ["9007199254740993", "1" * 30, "-" + "9" * 20, "1" * 5000]
GAPS = [" ", " ", " ", "\t", "  ", " \t "]
ENDINGS = ["\n", "\n", "\n", "\r\n"]


def _join(draw, tokens) -> str:
    text = tokens[0]
    for token in tokens[1:]:
        text += draw(st.sampled_from(GAPS)) + token
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from([" ", "\t"])) + text + draw(st.sampled_from(["", " "]))
    return text


@st.composite
def text_lines(draw, columns, trigger_column=None, triggers=()):
    """``(text, trigger field or None)``: a line of whitespace-separated columns."""
    names = [name for name, _ in columns]
    kind = draw(st.integers(0, 19))
    if kind == 0:
        return draw(st.sampled_from(["", "   ", "\t", "\x0b"])), None
    if kind == 1:  # a wrong number of columns
        n = draw(st.sampled_from([1, len(columns) - 1, len(columns) + 1]))
        return " ".join(draw(st.sampled_from(IDS + RANKS)) for _ in range(n)), None
    tokens = [draw(st.sampled_from(pool)) for _, pool in columns]
    if trigger_column is not None and kind == 2:  # an otherwise plain line with a trigger
        tokens = [f"q{draw(st.integers(1, 3))}", "Q0", f"d{draw(st.integers(1, 9))}"][:len(tokens)]
        tokens += [pool[0] for _, pool in columns[len(tokens):]]
        tokens[names.index(trigger_column)] = draw(st.sampled_from(triggers))
        return " ".join(tokens), trigger_column
    if kind < 12:  # plain: few ids, so duplicates and interleaved queries happen
        tokens[0] = f"q{draw(st.integers(1, 3))}"
        if "doc_id" in names:
            tokens[names.index("doc_id")] = f"d{draw(st.integers(1, 9))}"
    return _join(draw, tokens), None


def trec_run_lines():
    return text_lines([("query_id", IDS), ("q0", ["Q0", "0", "x"]), ("doc_id", IDS),
                       ("rank", RANKS), ("score", SCORES), ("tag", ["run", "t"])])


def trec_run_trigger_lines():
    return st.one_of(
        text_lines([("query_id", IDS), ("q0", ["Q0"]), ("doc_id", IDS), ("rank", ["1"]),
                    ("score", ["0.5"]), ("tag", ["run"])], "rank", RANK_TRIGGERS),
        text_lines([("query_id", IDS), ("q0", ["Q0"]), ("doc_id", IDS), ("rank", ["1"]),
                    ("score", ["0.5"]), ("tag", ["run"])], "score", SCORE_TRIGGERS))


def trec_qrels_lines():
    return text_lines([("query_id", IDS), ("iteration", ["0", "Q0"]), ("doc_id", IDS),
                       ("relevance", LABELS)])


def trec_qrels_trigger_lines():
    return text_lines([("query_id", IDS), ("iteration", ["0"]), ("doc_id", IDS),
                       ("relevance", ["1"])], "relevance", LABEL_TRIGGERS)


@st.composite
def beir_lines(draw, trigger=False):
    if trigger:
        return (f"q{draw(st.integers(1, 3))}\td{draw(st.integers(1, 9))}\t"
                + draw(st.sampled_from(LABEL_TRIGGERS))), "score"
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["", "  ", "q1\td1", "q1\td1\t1\t2", " \td1\t1", "q1\t \t1",
                                     "query-id\tcorpus-id\tscore", "q1 d1 1"])), None
    parts = [f"q{draw(st.integers(1, 3))}", f"d{draw(st.integers(1, 9))}",
             draw(st.sampled_from(LABELS))]
    if kind == 1:
        parts = [draw(st.sampled_from(IDS)) for _ in range(2)] + [parts[2]]
    pad = draw(st.sampled_from(["", "", " ", "\u00a0"]))
    return "\t".join(pad + p for p in parts), None


@st.composite
def plain_lines(draw, columns):
    """A valid line (single spaces, few ids): files of these reach the fast path."""
    tokens = [draw(st.sampled_from(pool)) for pool in columns]
    tokens[0] = f"q{draw(st.integers(1, 3))}"
    if len(columns) > 3:
        tokens[2] = f"d{draw(st.integers(1, 40))}"
    return " ".join(tokens), None


PLAIN_RUN = plain_lines([["q"], ["Q0"], ["d"], ["1", "2", "3", "10", "0", "-2"],
                         ["0.5", "0.25", "1", "-3.5", "1e-3", "7"], ["run"]])
PLAIN_QRELS = plain_lines([["q"], ["0"], ["d"], ["0", "1", "2", "-1", "3"]])


@st.composite
def files(draw, lines, trigger_lines, header=None, plain=None):
    """``(bytes, first trigger line or None)`` of a generated file: random lines, or (half
    the time, when ``plain`` is given) valid lines with one random line among them."""
    if plain is not None and draw(st.booleans()):
        body = draw(st.lists(plain, min_size=1, max_size=25))
        if draw(st.integers(0, 3)):
            body.insert(draw(st.integers(0, len(body))),
                        draw(st.one_of(lines, trigger_lines)))
    else:
        body = draw(st.lists(st.one_of(lines, lines, lines, trigger_lines), max_size=25))
    chunks, first_trigger, number = [], None, 0
    bom = draw(st.integers(0, 9)) == 0
    if header is not None:
        chunks.append(draw(st.sampled_from([header, header, header, header + " ", "query-id\tdoc"]))
                      .encode() + b"\n")
        number = 1
    for text, trigger in body:
        number += 1
        if draw(st.integers(0, 29)) == 0:
            chunks.append(b"q1 Q0 \xff\xfe 1 0.5 run\n")  # not UTF-8
            continue
        chunks.append(text.encode("utf-8") + draw(st.sampled_from(ENDINGS)).encode())
        if trigger and first_trigger is None:
            first_trigger = (number, trigger)
    data = b"".join(chunks)
    if data and draw(st.booleans()):
        data = data.rstrip(b"\n")  # no newline after the last line
    return (b"\xef\xbb\xbf" if bom else b"") + data, first_trigger


def _outcome(reader, path):
    try:
        result = reader(path)
    except Exception as exc:  # noqa: BLE001 - compared by the caller
        return None, exc
    if hasattr(result, "judgements"):
        result = (result.path, result.judgements, result.negative_labels)
    elif not isinstance(result, dict):
        result = list(result)
    return result, None


def agree(new_reader, old_reader, data: bytes, trigger, suffix: str):
    path = _DIR / f"input{suffix}"
    path.write_bytes(data)
    new, new_error = _outcome(new_reader, path)
    old, old_error = _outcome(old_reader, path)
    old_line = None
    if old_error is not None:
        if type(old_error).__name__ == "FormatError":
            old_line = old_error.line
        elif trigger is None:
            raise AssertionError(f"the old reader crashed on an unmarked input: {old_error!r}")
    if trigger is None or (old_line is not None and old_line < trigger[0]):
        if old_error is None:
            assert new_error is None, f"new refused what the old read: {new_error}"
            assert new == old
            return
        assert isinstance(new_error, formats.FormatError), repr(new_error)
        assert (str(new_error), new_error.path, new_error.line, new_error.field) == (
            str(old_error), old_error.path, old_error.line, old_error.field)
        return
    # a marked line comes first: refused there, located
    assert isinstance(new_error, formats.FormatError), f"{trigger}: got {new!r} / {new_error!r}"
    assert new_error.path == str(path)
    line, field = trigger
    if old_line is not None and old_line == line:
        assert new_error.line == line and new_error.field in (field, old_error.field), new_error
    elif old_line is None and old_error is not None and type(old_error).__name__ == "FormatError":
        # a whole-file error of the old reader (e.g. empty): the new one may name the line
        assert new_error.line in (line, None), new_error
    else:
        assert (new_error.line, new_error.field) == (line, field), new_error


def _columns_as_lists(path):
    """``read_run_columns`` as ScoredDoc lists, to compare with the previous reader."""
    from harness.core.records import ScoredDoc

    return {q: [ScoredDoc(q, d, s) for d, s in zip(*docs, strict=True)]
            for q, docs in formats.read_run_columns(path).items()}


# --------------------------------------------------------------------------- JSONL

ID_VALUES = ["q1", "q2", "q3", 1, 2, 0, "", True, None, 1.5, [], {}, "é"]
SCORE_VALUES = [0.5, -1.0, 1, 0, 1e300, "0.5", "nan", " 0.5 ", "1_0", True, None, [],
                float("nan"), float("inf"), 2 ** 53, -2 ** 53, 0.25, 0.75]
LABEL_VALUES = [0, 1, 2, -1, True, 1.0, "1", None, 2 ** 31 - 1, -2 ** 31, 3]
DEEP = "[" * 100000 + "]" * 100000


@st.composite
def json_lines(draw, third, values, triggers=()):
    kind = draw(st.integers(0, 19))
    if kind == 0:
        return draw(st.sampled_from(["", "  ", "not json", "[1, 2]", "1", '"s"', "{",
                                     '{"a": 1} {"b": 2}', "\ufeff{}", "{'a': 1}",
                                     '{"query_id": "q1", "doc_id": "d1", "x": "\x01"}'])), None
    if kind == 1 and triggers:  # marked: what the old readers crashed on or accepted wrongly
        which = draw(st.sampled_from(["deep", "digits", "value"]))
        base = {"query_id": f"q{draw(st.integers(1, 3))}", "doc_id": f"d{draw(st.integers(1, 9))}"}
        if which == "deep":
            return json.dumps(base)[:-1] + f', "{third}": ' + DEEP + "}", None
        if which == "digits":
            return json.dumps(base)[:-1] + f', "{third}": ' + "7" * 5000 + "}", None
        base[third] = draw(st.sampled_from(triggers))
        return json.dumps(base), third
    obj = {}
    for name, pool in (("query_id", ID_VALUES), ("doc_id", ID_VALUES), (third, values)):
        if draw(st.integers(0, 14)):
            obj[name] = draw(st.sampled_from(pool))
    if kind < 12:
        obj["query_id"] = f"q{draw(st.integers(1, 3))}"
        obj["doc_id"] = f"d{draw(st.integers(1, 9))}"
    if draw(st.integers(0, 9)) == 0:
        obj["extra"] = draw(st.sampled_from([1, "x", None, [1, {"a": 2}]]))
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from([" ", "\t", ""])) + text + draw(st.sampled_from([" ", "", "\r"]))
    return text, None


def _as_json(third):
    """A plain text line as a JSONL object (its third field from the last column)."""
    def convert(line):
        parts = line[0].split(" ")
        value = json.loads(parts[-2] if third == "score" else parts[-1])
        return json.dumps({"query_id": parts[0], "doc_id": parts[2], third: value}), None
    return convert


def _json_marks(data: bytes, trigger):
    """Lines the old readers crashed on (deep nesting, 5000-digit numbers) count as marks."""
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if b"[" * 1000 in line or b"7" * 5000 in line:
            if trigger is None or number < trigger[0]:
                return number, None
            break
    return trigger
