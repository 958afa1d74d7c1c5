"""Builders of small corpora in the upstream layouts, shared by the ingestion tests."""

from __future__ import annotations

import json
from pathlib import Path


def write_beir(folder: Path, *, docs=None, queries=None, qrels=None) -> Path:
    """A tiny BEIR dataset folder: 4 documents, 3 queries, test and dev qrels."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = docs or [
        {"_id": "d1", "title": "Cats", "text": "Cats purr when content."},
        {"_id": "d2", "title": "Dogs", "text": "Dogs bark at strangers."},
        {"_id": "d3", "title": "Birds", "text": "Birds sing at dawn."},
        {"_id": "d4", "title": "", "text": "Fish swim in schools."},
    ]
    queries = queries or [
        {"_id": "q1", "text": "why do cats purr"},
        {"_id": "q2", "text": "when do birds sing"},
        {"_id": "q3", "text": "do dogs bark"},
    ]
    qrels = qrels or {"test": [("q1", "d1", 1), ("q2", "d3", 2), ("q2", "d4", 0)],
                      "dev": [("q3", "d2", 1)]}
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries),
                                          encoding="utf-8")
    (folder / "qrels").mkdir(exist_ok=True)
    for split, rows in qrels.items():
        (folder / "qrels" / f"{split}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in rows),
            encoding="utf-8")
    return folder


def qmsum_meeting(n_turns: int, spans, *, speakers=("A", "B"), words=3, general=1) -> dict:
    """A QMSum meeting JSON object with ``n_turns`` turns of ``words`` words each."""
    return {
        "topic_list": [],
        "general_query_list": [{"query": "Summarize the whole meeting.", "answer": "x"}] * general,
        "specific_query_list": [
            {"query": q, "answer": "a", "relevant_text_span": [[str(a), str(b)] for a, b in s]}
            for q, s in spans
        ],
        "meeting_transcripts": [
            {"speaker": speakers[i % len(speakers)], "content": " ".join(["w"] * words)}
            for i in range(n_turns)
        ],
    }


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


#: the MIT licence as a corpus's LICENSE file holds it
MIT_TEXT = """MIT License

Copyright (c) 2021 Someone

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY.
"""
