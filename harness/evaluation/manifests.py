"""Agreement manifests: which runs form which families, read and validated (naming the
field at fault), turned into :class:`harness.stats.agreement.Arm` values, and emitted as a
template from results directories.  The statistics themselves are in
:mod:`harness.stats.agreement`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

from harness.claims.metrics import run_id
from harness.core.tiers import most_restrictive_tier
from harness.core.formats import read_json_object
from harness.evaluation.results import load_metrics
from harness.stats.agreement import DEFAULT_MEASURE, Arm
from harness.claims.agreement import MANIFEST_KIND
from harness.core.canonical import canonical_json
from harness.core.outputs import is_document, write_file

_MANIFEST_KEYS = {"kind", "measure", "corpora", "families", "note"}
_FAMILY_KEYS = {"name", "control", "arms", "note"}
_ARM_KEYS = {"name", "run", "axis", "deltas", "note"}


def _manifest_error(path, where: str, message: str) -> ValueError:
    return ValueError(f"{path}: {where}: {message}")


def load_manifest(path) -> dict:
    """Read and validate an agreement manifest (JSON), naming the field at fault."""
    path = Path(path)
    doc = read_json_object(path)
    extra = sorted(set(doc) - _MANIFEST_KEYS)
    if extra:
        raise _manifest_error(path, "top level", f"unknown fields {extra}; allowed {sorted(_MANIFEST_KEYS)}")
    if doc.get("kind", MANIFEST_KIND) != MANIFEST_KIND:
        raise _manifest_error(path, "field 'kind'", f"expected {MANIFEST_KIND!r}, got {doc['kind']!r}")
    corpora = doc.get("corpora")
    if corpora is not None and (not isinstance(corpora, list) or len(corpora) != 2
                                or not all(isinstance(c, str) and c for c in corpora)
                                or corpora[0] == corpora[1]):
        raise _manifest_error(path, "field 'corpora'",
                              f"must name exactly two distinct corpora, got {corpora!r}")
    families = doc.get("families")
    if not isinstance(families, list) or not families:
        raise _manifest_error(path, "field 'families'", "must be a non-empty list")
    seen_fam = set()
    for i, fam in enumerate(families):
        where = f"families[{i}]"
        if not isinstance(fam, dict):
            raise _manifest_error(path, where, "expected an object")
        extra = sorted(set(fam) - _FAMILY_KEYS)
        if extra:
            raise _manifest_error(path, where, f"unknown fields {extra}; allowed {sorted(_FAMILY_KEYS)}")
        if not isinstance(fam.get("name"), str) or not fam["name"]:
            raise _manifest_error(path, f"{where}.name", "missing or empty")
        if fam["name"] in seen_fam:
            raise _manifest_error(path, f"{where}.name", f"family {fam['name']!r} listed twice")
        seen_fam.add(fam["name"])
        arms = fam.get("arms")
        if not isinstance(arms, list) or not arms:
            raise _manifest_error(path, f"{where}.arms", "must be a non-empty list")
        for j, arm in enumerate(arms):
            aw = f"{where}.arms[{j}]"
            if not isinstance(arm, dict):
                raise _manifest_error(path, aw, "expected an object")
            extra = sorted(set(arm) - _ARM_KEYS)
            if extra:
                raise _manifest_error(path, aw, f"unknown fields {extra}; allowed {sorted(_ARM_KEYS)}")
            if not isinstance(arm.get("name"), str) or not arm["name"]:
                raise _manifest_error(path, f"{aw}.name", "missing or empty")
            if ("run" in arm) == ("deltas" in arm):
                raise _manifest_error(path, aw, "give exactly one of 'run' (a results dir or "
                                                "metrics.json) and 'deltas' (typed-in values)")
            if "run" in arm and not isinstance(fam.get("control"), str):
                raise _manifest_error(path, f"{where}.control", "an arm with a 'run' needs its "
                                                                "family's control run")
            if "deltas" in arm and not isinstance(arm["deltas"], dict):
                raise _manifest_error(path, f"{aw}.deltas", "expected {class: {corpus: delta}}")
    return doc


def _resolve(base: Path, run: str) -> Path:
    p = Path(run)
    return p if p.is_absolute() else base / p


def _row(metrics: Mapping, corpus: str, query_class: str, measure: str, where: str) -> tuple[float, int, str]:
    for row in metrics["rows"]:
        if row["corpus"] == corpus and row["query_class"] == query_class:
            if measure not in row["metrics"]:
                raise ValueError(f"{where}: row ({corpus}, {query_class}) has no {measure!r}; "
                                 f"measures: {sorted(row['metrics'])}")
            return float(row["metrics"][measure]), int(row["n"]), str(row["tier"])
    raise ValueError(f"{where}: no row for corpus {corpus!r}, class {query_class!r}")


def _single_corpora(metrics: Mapping) -> set[str]:
    return {r["corpus"] for r in metrics["rows"] if "+" not in str(r["corpus"])}


def arms_from_manifest(manifest: Mapping, base_dir, *, measure: str | None = None,
                       query_class: str = "all", corpora: Sequence[str] | None = None
                       ) -> tuple[list[Arm], list[str], str]:
    """``(arms, corpora, measure)``: every arm's deltas against its family's control.

    Corpora come from ``corpora``, else the manifest, else every run's two corpora (which
    must be the same two).  Relative run paths resolve against ``base_dir`` (the manifest's
    directory).  An arm and its control must have scored the same number of queries.
    """
    base = Path(base_dir)
    measure = measure or manifest.get("measure") or DEFAULT_MEASURE
    corpora = list(corpora or manifest.get("corpora") or [])
    loaded: dict[Path, dict] = {}

    def load(run: str) -> tuple[Path, dict]:
        path = _resolve(base, run)
        if path not in loaded:
            loaded[path] = load_metrics(path)
        return path, loaded[path]

    for fam in manifest["families"]:
        if fam.get("control"):
            load(fam["control"])
        for arm in fam["arms"]:
            if "run" in arm:
                load(arm["run"])
    if not corpora:
        sets = {p: _single_corpora(m) for p, m in loaded.items()}
        distinct = {frozenset(s) for s in sets.values()}
        if len(distinct) != 1 or len(next(iter(distinct))) != 2:
            raise ValueError("cannot infer the two corpora: the runs hold "
                             f"{sorted(sorted(s) for s in distinct)}; name them in the manifest's "
                             "'corpora' (or --corpora A B)")
        corpora = sorted(next(iter(distinct)))
    if len(corpora) != 2 or corpora[0] == corpora[1]:
        raise ValueError(f"agreement compares exactly two corpora, got {corpora}")

    arms = []
    for fam in manifest["families"]:
        ctl = load(fam["control"]) if fam.get("control") else None
        for arm in fam["arms"]:
            where = f"family {fam['name']!r}, arm {arm['name']!r}"
            if "deltas" in arm:
                by_class = arm["deltas"].get(query_class)
                if not isinstance(by_class, dict) or any(c not in by_class for c in corpora):
                    raise ValueError(f"{where}: typed-in deltas need deltas.{query_class}.{corpora[0]} "
                                     f"and .{corpora[1]}")
                vals = []
                for c in corpora:
                    v = by_class[c]
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                        raise ValueError(f"{where}: delta for {c!r} must be a finite number, got {v!r}")
                    vals.append(float(v))
                arms.append(Arm(fam["name"], arm["name"], arm.get("axis"), (vals[0], vals[1]), "given",
                                None, "B"))
                continue
            path, metrics = load(arm["run"])
            ctl_path, ctl_metrics = ctl
            deltas, tiers = [], []
            for c in corpora:
                a_val, a_n, a_tier = _row(metrics, c, query_class, measure, f"{path} ({where})")
                c_val, c_n, c_tier = _row(ctl_metrics, c, query_class, measure,
                                          f"{ctl_path} (control of family {fam['name']!r})")
                if a_n != c_n:
                    raise ValueError(f"{path} ({where}): {c}/{query_class} scored {a_n} queries but the "
                                     f"family's control scored {c_n}; a delta needs the same query set")
                deltas.append(a_val - c_val)
                tiers += [a_tier, c_tier]
            arms.append(Arm(fam["name"], arm["name"], arm.get("axis"), (deltas[0], deltas[1]),
                            "measured", run_id(metrics), most_restrictive_tier(tiers)))
    return arms, corpora, measure


def _flatten(value, prefix: str = "") -> dict:
    if isinstance(value, Mapping):
        out = {}
        for k in sorted(value):
            out.update(_flatten(value[k], f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def emit_manifest(run_dirs: Sequence, *, family: str | None = None,
                  measure: str = DEFAULT_MEASURE) -> dict:
    """A manifest template from results directories.

    Runs are grouped into families by ``family`` (one family for all) or by their
    ``retrieval`` block's stage and scope and their query counts (arms are only comparable
    with the control they share a stage and query set with).  In each family the control is
    the run whose ``retrieval.fusion.selected_explicitly`` is false when exactly one is;
    otherwise the first by name, marked in a ``note`` for you to check.  An arm's axis is the
    list of ``retrieval`` fields in which it differs from its control.
    """
    if not run_dirs:
        raise ValueError("--emit-manifest needs the runs to describe (--runs DIR ...)")
    runs = []
    for d in run_dirs:
        path = Path(d).resolve()
        metrics = load_metrics(path)
        retrieval = metrics.get("retrieval") or {}
        sig = tuple(sorted((r["corpus"], r["query_class"], r["n"]) for r in metrics["rows"]))
        runs.append((path, metrics, retrieval if isinstance(retrieval, Mapping) else {}, sig))
    names = [str(m["control_name"]) for _, m, _, _ in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"runs must have distinct control_name values; repeated: {dupes}")
    groups: dict[tuple, list] = {}
    for run in runs:
        _, _, retrieval, sig = run
        key = (family,) if family else (str(retrieval.get("stage", "default")),
                                        str(retrieval.get("scope", "")), sig)
        groups.setdefault(key, []).append(run)
    families = []
    used_names: set[str] = set()
    for key in sorted(groups, key=str):
        members = sorted(groups[key], key=lambda r: str(r[1]["control_name"]))
        name = family or "-".join(p for p in key[:2] if p)
        if name in used_names:
            name = f"{name}-n{sum(n for _, _, n in key[2])}"
        used_names.add(name)
        defaults = [r for r in members
                    if isinstance(r[2].get("fusion"), Mapping)
                    and r[2]["fusion"].get("selected_explicitly") is False]
        fam: dict = {"name": name}
        if len(defaults) == 1:
            control = defaults[0]
        else:
            control = members[0]
            fam["note"] = "control guessed (first by name): check it"
        fam["control"] = str(control[0])
        ctl_flat = _flatten(control[2])
        arms = []
        for path, metrics, retrieval, _ in members:
            if path == control[0]:
                continue
            flat = _flatten(retrieval)
            diff = sorted(k for k in set(flat) | set(ctl_flat) if flat.get(k) != ctl_flat.get(k))
            arms.append({"name": str(metrics["control_name"]), "run": str(path),
                         "axis": ",".join(diff) if diff else "none (identical retrieval block)"})
        if not arms:
            fam["note"] = "a family needs at least one arm besides its control: add runs"
            arms = []
        fam["arms"] = arms
        families.append(fam)
    corpora = sorted(set.intersection(*(_single_corpora(m) for _, m, _, _ in runs)))
    doc = {"kind": MANIFEST_KIND, "measure": measure, "families": families}
    if len(corpora) == 2:
        doc["corpora"] = corpora
    else:
        doc["note"] = f"name the two corpora to compare in 'corpora' (the runs share {corpora})"
    return doc


def write_manifest(path, doc: Mapping, *, flag: str = "--out") -> Path:
    """Write an agreement manifest as canonical JSON, atomically, replacing only an empty
    file or another manifest (:mod:`harness.core.outputs`)."""
    return write_file(path, canonical_json(dict(doc)), recognise=is_document(MANIFEST_KIND),
                      what="agreement manifest", flag=flag)
