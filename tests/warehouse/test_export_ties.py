"""The tie marks of every export agree with an independent computation, pooled rows included.

The fixture warehouse (tests/pages/fixture_warehouse.py) holds control, arm-one and arm-two
over pub + alt, so each has a pooled ``alt+pub`` row whose queries are the members' (their
per-query rows carry ``alt`` and ``pub``, never ``alt+pub``).  The expected marks come from
scipy's exact paired permutation test and statsmodels' Holm correction, not from the
harness.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test
from statsmodels.stats.multitest import multipletests

from harness.claims.comparisons import is_borderline
from harness.stats.best import tied_with_best
from tests.pages.fixture_warehouse import QUERIES, arm_one, arm_two, control_values
from warehouse.exports import export_table, mark_ties

RUNS = {"control": control_values, "arm-one": arm_one, "arm-two": arm_two}
POOLED = "alt+pub"


@pytest.fixture
def fixture(fixture_warehouse):
    return fixture_warehouse


def _independent_ties(measure: str = "nDCG@10") -> dict[str, str]:
    """Per run, over every query of alt and pub: the best mean, and for each other run the
    exact two-sided sign-flip p against it (scipy), Holm-adjusted (statsmodels)."""
    values = {name: make(["alt", "pub"]) for name, make in RUNS.items()}
    keys = sorted(values["control"])
    assert len(keys) == QUERIES["alt"] + QUERIES["pub"]
    vectors = {name: np.array([v[k][measure] for k in keys]) for name, v in values.items()}
    best = max(vectors, key=lambda name: vectors[name].mean())
    others = [name for name in vectors if name != best]
    ps = []
    for name in others:
        test = permutation_test((vectors[name], vectors[best]),
                                lambda x, y: np.mean(x - y), permutation_type="samples",
                                n_resamples=np.inf, alternative="two-sided")
        ps.append(test.pvalue)
    _, adjusted, _, _ = multipletests(ps, alpha=0.05, method="holm")
    return {best: "best", **{name: "tied" if p > 0.05 else "not tied"
                             for name, p in zip(others, adjusted)}}


def test_pooled_rows_carry_the_ties_an_independent_holm_sign_flip_finds(fixture):
    expected = _independent_ties()
    # the data make it a real check: one run separated from the best, one tied with it
    assert sorted(expected.values()) == ["best", "not tied", "tied"]
    ids = [fixture["ids"][name] for name in RUNS]
    csv_text = export_table("publishable", "csv", runs=ids, measures=["nDCG@10"],
                            tie_test=tied_with_best, db_path=fixture["db"])
    frame = pd.read_csv(io.StringIO(csv_text))
    pooled = frame[frame["corpus"] == POOLED].set_index("run")
    assert len(pooled) == 3
    assert pooled["nDCG@10 tie"].to_dict() == expected
    assert pooled["nDCG@10 tied_with_best"].to_dict() == {
        name: state == "tied" for name, state in expected.items()}
    tied = next(name for name, state in expected.items() if state == "tied")
    # the Markdown and the LaTeX mark the same run of the pooled slice
    md = export_table("publishable", "md", runs=ids, measures=["nDCG@10"],
                      tie_test=tied_with_best, db_path=fixture["db"])
    pooled_lines = [line for line in md.splitlines() if f"| {POOLED} |" in line]
    marked = {line.split(" | ")[0].lstrip("| ") for line in pooled_lines if " †" in line}
    assert marked == {tied}
    latex = export_table("publishable", "latex", runs=ids, measures=["nDCG@10"],
                         tie_test=tied_with_best, db_path=fixture["db"])
    section = latex[latex.index(r"\textit{alt+pub, all"):]
    daggers = [line.split(" & ")[0] for line in section.splitlines()
               if r"$^{\dagger}$ &" in line or line.endswith(r"$^{\dagger}$ \\")]
    assert daggers == [tied]


def test_a_pooled_filter_selects_its_members_per_query_values(fixture):
    """``--corpus alt+pub`` alone still tests the pooled slice (its values are the members')."""
    ids = [fixture["ids"][name] for name in RUNS]
    frame = pd.read_csv(io.StringIO(export_table(
        "publishable", "csv", runs=ids, corpora=[POOLED], measures=["nDCG@10"],
        tie_test=tied_with_best, db_path=fixture["db"])))
    assert set(frame["corpus"]) == {POOLED}
    assert frame.set_index("run")["nDCG@10 tie"].to_dict() == _independent_ties()


def test_a_slice_whose_test_cannot_run_says_not_tested():
    # two runs of one corpus that share no query: nothing to pair, so no verdict
    per_query = pd.DataFrame([
        dict(run_id="x", corpus="c", query_class="a", query_id="q1", measure="MRR", value=1.0),
        dict(run_id="y", corpus="c", query_class="a", query_id="q2", measure="MRR", value=0.5)])
    rows = pd.DataFrame([dict(run_id=r, run=r, corpus="c", measure="MRR", value=v, tier="A",
                              **{"class": "all"}) for r, v in (("x", 1.0), ("y", 0.5))])
    marked = mark_ties(rows, per_query, tied_with_best)
    assert list(marked["tie"]) == ["not tested", "not tested"]
    assert not marked["tied"].any()
    # no per-query values at all: the same, never a silent "not tied"
    assert list(mark_ties(rows, None, tied_with_best)["tie"]) == ["not tested"] * 2
    # a slice of one run has no test to run and no mark
    assert list(mark_ties(rows.iloc[:1], per_query, tied_with_best)["tie"]) == [""]


def test_borderline_is_within_monte_carlo_error_of_alpha():
    # p = 0.0465 from 10,000 sign vectors: standard error sqrt(0.0465 x 0.9535 / 10^4) =
    # 0.0021; 3.29 of them reach 0.0534 > 0.05: borderline.  From 100,000 vectors the error
    # is 0.00067 and the band [0.0443, 0.0487] stays under 0.05: a plain verdict.
    se = math.sqrt(0.0465 * 0.9535 / 10_000)
    assert 0.0465 + 3.29 * se > 0.05
    assert is_borderline(0.0465, 0.0465, 10_000, 0.05)
    assert not is_borderline(0.0465, 0.0465, 100_000, 0.05)
    # Holm's multiplier scales the error with the p: raw 0.0155 x 3 = 0.0465
    assert is_borderline(0.0155, 0.0465, 10_000, 0.05)
    # an exact p has no sampling error
    assert not is_borderline(0.0499, 0.0499, None, 0.05)


def test_a_borderline_tie_is_redrawn_with_more_sign_vectors_until_it_is_stable():
    # 20 discordant queries (above the exact limit of 16): 15 improve by 1, 5 worsen by 1.
    # Exact p = P(|S| >= 10) = 2 x sum_{k<=5} C(20, k) / 2^20 = 0.04139.  With 1,000 sign
    # vectors its error (0.0063) puts the verdict within reach of 0.05; with 10,000 (0.0020)
    # the band [0.035, 0.048] is below it: separated from the best, not tied.
    exact = 2 * sum(math.comb(20, k) for k in range(6)) / 2 ** 20
    assert exact == pytest.approx(0.041389, abs=1e-6)
    best = np.ones(20)
    other = np.array([0.0] * 15 + [2.0] * 5)
    result = tied_with_best({"best": best, "other": other}, permutations=1000)
    assert result["other"].permutations == 10_000
    assert not result["other"].borderline and not result["other"].tied
    assert result["other"].p == pytest.approx(exact, abs=3.29 * math.sqrt(exact / 10_000))


def test_latex_prints_the_digits_that_separate_a_bold_best_from_a_marked_run():
    # 0.13424 (best) and 0.13392 (tied) are both 0.134 to 3 decimals; 0.1342 and 0.1339 to 4
    from tests.warehouse.latex_shapes import shape
    from warehouse.latex import separating_digits
    from warehouse.render import render_latex

    export = shape(measures=1, runs=2)
    rows = export.rows.copy()
    rows.loc[rows["run"] == "arm-0", "value"] = 0.13424
    rows.loc[rows["run"] == "arm-1", "value"] = 0.13392
    rows["tie"] = ["best" if r == "arm-0" else "tied" for r in rows["run"]]
    rows["tied"] = rows["tie"] == "tied"
    assert separating_digits(rows) == 4
    text = render_latex(type(export)(export.view, rows, export.provenance, rows=rows,
                                     labels=export.labels))
    assert r"\bfseries 0.1342 " in text and r"0.1339$^{\dagger}$" in text
    assert "S[table-format=1.4" in text and "0.134 " not in text
    # equal means print equal digits, however many decimals are allowed
    rows.loc[:, "value"] = 0.5
    assert separating_digits(rows) == 3


def test_a_control_without_stored_tests_says_what_is_missing_and_how_to_add_it(fixture):
    # served has no paired test against the control in the fixture warehouse
    ids = [fixture["ids"]["control"], fixture["ids"]["served"]]
    kwargs = dict(runs=ids, corpora=["pub"], measures=["nDCG@10"],
                  control=fixture["ids"]["control"], db_path=fixture["db"])
    latex = export_table("publishable", "latex", **kwargs)
    assert "with its interval" not in latex
    assert "no paired test is stored for some arms" in latex
    assert r"\texttt{python -m harness intervals ARM\_DIR... --control CONTROL\_DIR}" in latex
    md = export_table("publishable", "md", **kwargs)
    assert "no paired test is stored for that arm" in md
    assert "`python -m harness intervals ARM_DIR... --control CONTROL_DIR`" in md
    # with the tests stored (arm-one against the control) the notes promise the interval
    tested = export_table("publishable", "latex", **{
        **kwargs, "runs": [fixture["ids"]["control"], fixture["ids"]["arm-one"]]})
    assert "with its interval" in tested and "no paired test is stored" not in tested


def test_the_command_the_missing_test_note_prints_runs(tmp_path):
    """NO_TEST_NOTE's command, its placeholders filled with two results directories."""
    import re
    import subprocess
    import sys

    from tests.pages.fixture_warehouse import retrieval, write_run
    from warehouse.render import NO_TEST_NOTE

    control = write_run(tmp_path / "control", "control", control_values(["pub"]), minutes=0,
                        retrieval=retrieval())
    arm = write_run(tmp_path / "arm", "arm", arm_one(["pub"]), minutes=1,
                    retrieval=retrieval())
    command = re.search(r"`(python -m harness intervals [^`]*)`", NO_TEST_NOTE).group(1)
    argv = command.replace("ARM_DIR...", str(arm)).replace("CONTROL_DIR", str(control))
    done = subprocess.run([sys.executable, *argv.split()[1:]], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert (arm / "comparisons.json").is_file() and (control / "intervals.json").is_file()


def test_where_means_are_shown_the_queries_left_out_for_no_relevant_document_are_said():
    # trec_eval -c would score such a query 0; the harness leaves it out of the mean
    from warehouse.render import dropped_note

    rows = pd.DataFrame([dict(corpus=c, dropped=d, **{"class": k})
                         for c, k, d in (("a", "all", 3), ("a", "x", 1), ("b", "all", 0),
                                         ("a+b", "all", 3))])
    note = dropped_note(rows)
    assert "3 of a" in note and " b" not in note and "trec_eval -c" in note
    assert dropped_note(rows.assign(dropped=0)) == ""
