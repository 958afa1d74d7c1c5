"""The judge as a measuring instrument: prediction-powered inference for a mean.

A model judge scores every item; humans label a few.  Averaging the judge is a precise
estimate of the judge's opinion, not of the truth.  Prediction-powered inference
(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, Science 2023) measures the judge's bias on
the labelled items and subtracts it::

    theta = mean(labels) + lambda * (mean_unlabelled(judge) - mean_labelled(judge))

with the power-tuned ``lambda`` of PPI++ (Angelopoulos, Duchi & Zrnic, 2023) for the mean:
``lambda = Cov(label, judge) / ((1 + n/N) Var(judge))`` (judge variance over all judged
items), clipped to [0, 1]: a useless judge gets ``lambda ~ 0`` and the estimate falls back to
the hand-label mean, so validity never depends on the judge being good.  The interval is
``theta +- z sqrt(lambda^2 Var_u(judge)/N + Var(label - lambda judge)/n)``.

The effective label count is ``Var(label) / Var(theta)``: how many hand labels alone would
give the same precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import norm

from harness.core.canonical import sha256_file
from harness.core.formats import FormatError, read_jsonl


@dataclass(frozen=True)
class PPIResult:
    alpha: float
    estimate: float
    interval: tuple[float, float]
    lam: float
    judge_bias: float            # mean judge - mean label, on the labelled items
    effective_labels: float
    labelled: int
    unlabelled: int
    labels_only: float
    labels_only_interval: tuple[float, float]
    judge_only: float
    judge_only_interval: tuple[float, float]


def _var(x: np.ndarray) -> float:
    return float(np.var(x, ddof=1)) if x.size > 1 else 0.0


def tuned_lambda(labels: np.ndarray, judge_labelled: np.ndarray,
                 judge_unlabelled: np.ndarray) -> float:
    """PPI++ variance-minimising lambda for the mean, clipped to [0, 1]."""
    n, big_n = labels.size, judge_unlabelled.size
    if big_n == 0:
        return 0.0
    everything = np.concatenate([judge_labelled, judge_unlabelled])
    var_f = _var(everything)
    if var_f <= 0:
        return 0.0
    cov = float(np.cov(labels, judge_labelled, ddof=1)[0, 1]) if n > 1 else 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0))


def ppi_mean(labels, judge_labelled, judge_unlabelled, alpha: float = 0.05,
             lam: float | None = None) -> PPIResult:
    """Prediction-powered estimate and (1 - alpha) interval of the mean label."""
    y = np.asarray(labels, dtype=float)
    f = np.asarray(judge_labelled, dtype=float)
    fu = np.asarray(judge_unlabelled, dtype=float)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if y.size != f.size:
        raise ValueError(f"{y.size} labels but {f.size} judge scores for the labelled items")
    if y.size < 2:
        raise ValueError(f"PPI needs at least 2 hand-labelled items to estimate a variance, "
                         f"got {y.size}")
    n, big_n = y.size, fu.size
    if lam is None:
        lam = tuned_lambda(y, f, fu)
    if big_n == 0:
        lam = 0.0
    z = float(norm.ppf(1 - alpha / 2))
    theta = float(y.mean() + (lam * (fu.mean() - f.mean()) if big_n else 0.0))
    variance = (lam ** 2) * (_var(fu) / big_n if big_n else 0.0) + _var(y - lam * f) / n
    half = z * math.sqrt(max(variance, 0.0))
    label_var = _var(y)
    effective = label_var / variance if variance > 0 else float(n)
    label_half = z * math.sqrt(label_var / n)
    judged = np.concatenate([f, fu])
    judge_half = z * math.sqrt(_var(judged) / judged.size)
    return PPIResult(
        alpha=alpha, estimate=theta, interval=(theta - half, theta + half), lam=float(lam),
        judge_bias=float(f.mean() - y.mean()), effective_labels=float(effective),
        labelled=n, unlabelled=big_n, labels_only=float(y.mean()),
        labels_only_interval=(float(y.mean()) - label_half, float(y.mean()) + label_half),
        judge_only=float(judged.mean()),
        judge_only_interval=(float(judged.mean()) - judge_half, float(judged.mean()) + judge_half),
    )


def _item_id(obj, path, line) -> str:
    if "item_id" not in obj:
        raise FormatError(path, line, "item_id", "missing")
    value = obj["item_id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        raise FormatError(path, line, "item_id", f"must be a non-empty string, got {value!r}")
    return str(value)


def _number(obj, name, path, line) -> float:
    if name not in obj:
        raise FormatError(path, line, name, "missing")
    value = obj[name]
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FormatError(path, line, name, f"must be a finite number, got {value!r}")
    return float(value)


def read_judge(path) -> dict[str, float]:
    """Judge scores ``{item_id: score in [0, 1]}`` from JSONL ``{item_id, score}``."""
    scores: dict[str, float] = {}
    lines: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        item = _item_id(obj, path, line)
        score = _number(obj, "score", path, line)
        if not 0.0 <= score <= 1.0:
            raise FormatError(path, line, "score", f"must lie in [0, 1], got {score!r}")
        if item in scores:
            raise FormatError(path, line, "item_id",
                              f"duplicate item {item!r}; first seen on line {lines[item]}")
        scores[item], lines[item] = score, line
    return scores


def read_labels(path, judge: dict[str, float]) -> dict[str, float]:
    """Human labels ``{item_id: label}`` from JSONL ``{item_id, label}`` (bools count 0/1).

    Every labelled item must have a judge score: PPI measures the judge's bias on them.
    """
    labels: dict[str, float] = {}
    lines: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        item = _item_id(obj, path, line)
        label = _number(obj, "label", path, line)
        if item in labels:
            raise FormatError(path, line, "item_id",
                              f"duplicate item {item!r}; first seen on line {lines[item]}")
        if item not in judge:
            raise FormatError(path, line, "item_id",
                              f"item {item!r} has a human label but no judge score")
        labels[item], lines[item] = label, line
    return labels


NO_LABELS = ("refusing to estimate: there are no human labels. The judge's mean is the judge's "
             "opinion of the system, not a measurement; hand-label a sample of the judged items "
             "(JSONL {{\"item_id\": ..., \"label\": ...}}) and pass it with --labels. "
             "(judge mean over {n} items: {mean:.3f}, no validity)")


def ppi_from_files(judge_path, labels_path, alpha: float = 0.05) -> tuple[PPIResult, dict]:
    """Read the judge and label files and estimate; refuses without human labels."""
    judge = read_judge(judge_path)
    mean = sum(judge.values()) / len(judge)
    if labels_path is None:
        raise ValueError(NO_LABELS.format(n=len(judge), mean=mean))
    try:
        labels = read_labels(labels_path, judge)
    except FormatError as exc:
        if "empty file" in str(exc):
            raise ValueError(f"{labels_path}: " + NO_LABELS.format(n=len(judge), mean=mean)) from None
        raise
    labelled = sorted(labels)
    unlabelled = sorted(set(judge) - set(labels))
    result = ppi_mean([labels[i] for i in labelled], [judge[i] for i in labelled],
                      [judge[i] for i in unlabelled], alpha=alpha)
    inputs = {"judge_sha256": sha256_file(judge_path), "labels_sha256": sha256_file(labels_path),
              "judge_file": Path(judge_path).name, "labels_file": Path(labels_path).name}
    return result, inputs


PPI_METHOD = ("prediction-powered inference for a mean (Angelopoulos, Bates, Fannjiang, Jordan & "
              "Zrnic, Science 2023) with PPI++ power tuning (Angelopoulos, Duchi & Zrnic 2023), "
              "lambda clipped to [0, 1], normal interval")


def ppi_document(result: PPIResult, inputs: dict, *, corpus: str | None = None,
                 tier: str = "B") -> dict:
    """The ``kind: ppi`` document of an estimate (canonical, with its ``document_id``)."""
    from harness.claims.certificate import SCHEMA_VERSION, with_id
    from harness.core.tiers import TIERS

    if tier not in TIERS:
        raise ValueError(f"unknown licence tier {tier!r}; expected one of {sorted(TIERS)}")
    doc = {
        "kind": "ppi", "schema_version": SCHEMA_VERSION, "method": PPI_METHOD,
        "alpha": result.alpha, "estimate": result.estimate, "interval": list(result.interval),
        "lambda": result.lam, "judge_bias": result.judge_bias,
        "effective_labels": result.effective_labels,
        "labelled": result.labelled, "unlabelled": result.unlabelled,
        "labels_only": {"estimate": result.labels_only, "interval": list(result.labels_only_interval)},
        "judge_only": {"estimate": result.judge_only, "interval": list(result.judge_only_interval),
                       "validity": "none: the judge's opinion of the system, not a measurement"},
        "inputs": inputs, "corpus": corpus, "tier": tier,
    }
    return with_id(doc)
