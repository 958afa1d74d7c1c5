"""What every page shares: the tier view, one cached loader over ``warehouse.queries``, the
guidance shown when the warehouse is missing, busy or empty, and number formatting.

The dashboard never holds a connection: each ``warehouse.queries`` function opens the file
read-only, queries and closes.  Results are cached with ``st.cache_data`` under the
warehouse's change stamp (file metadata only), so a new ingest is picked up on the next
rerun and the harness can write while the dashboard is up.
"""

from __future__ import annotations

import logging
import os
import runpy
import shlex
import sys
import time
from pathlib import Path
from typing import Callable

import streamlit as st

from dashboard import audience as aud
from dashboard import audit, idp
from dashboard.formatting import (MARK_LEGEND, fmt, fmt_delta, fmt_interval, fmt_p, fmt_signed,
                              mark, md_code, md_text, measure_defaults, missing, run_labels)
from warehouse import queries
from warehouse.db import change_stamp, default_path
from warehouse.errors import (SchemaOutOfDate, WarehouseBusy, WarehouseError,
                              WarehouseMissing)

log = logging.getLogger(__name__)

VIEW_KEY = "tier_view"
VIEWS: tuple[str, ...] = ("publishable", "internal")
VIEW_LABELS = {"publishable": "Publishable (tier A only)",
               "internal": "Internal (every tier; never publish)"}

#: the warehouse.queries functions pages may load (a loader name is never user input)
LOADERS = frozenset({
    "health", "runs", "corpora", "choices", "metric_table", "metric_intervals", "deltas",
    "deltas_tested", "comparisons", "per_query_pair", "per_query_values", "latency",
    "latency_samples", "latency_distribution", "agreement_documents", "agreement_results",
    "agreement_arms", "certificates", "certificate_monitoring", "ppi_results", "calibration",
    "corpus_composition",
    "answer_runs", "answer_table", "answer_details", "migration_decisions",
    "per_query_count", "runs_by_corpus", "latest_comparisons", "withheld_summary", "per_query_runs",
    "rankings", "query_texts", "judging_tasks", "task_pairs", "task_text", "task_judgments",
})

#: colours: a categorical scheme legible on white, and fixed colours per percentile
CATEGORY_SCHEME = "tableau10"
PERCENTILE_COLOURS = {"p50": "#1f5f8b", "p95": "#e08a1e", "p99": "#c0392b"}

#: the browser tab's icon, inline (a data URL: no request leaves the machine; a
#: ``:material/...:`` icon would be fetched from a font host on every page load)
ICON_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
            '<rect width="24" height="24" rx="5" fill="#1f5f8b"/>'
            '<path d="M6 12.5l4 4 8-9" fill="none" stroke="#ffffff" stroke-width="2.6" '
            'stroke-linecap="round" stroke-linejoin="round"/></svg>')

#: bytes 8-11 of every DuckDB database file
DUCKDB_MAGIC = b"DUCK"

#: the interpreter serving this dashboard (the virtualenv's): the commands work as printed,
#: without activating anything
PYTHON = shlex.quote(sys.executable)
FILL_COMMANDS = ("make demo   # fill it and serve this dashboard\n"
                 f"{PYTHON} -m harness demo --no-serve   # fill it only\n"
                 f"{PYTHON} -m warehouse ingest RESULTS_DIR ...   # add results you already have")


# --------------------------------------------------------------------------- the warehouse


def _secrets() -> dict:
    """``.streamlit/secrets.toml`` as a dict (empty when there is none)."""
    return st.secrets.to_dict() if st.secrets.load_if_toml_exists() else {}


def login_configured() -> bool:
    """Whether ``.streamlit/secrets.toml`` configures Streamlit's OIDC login (``[auth]``)."""
    return "auth" in _secrets()


def team() -> aud.Team | None:
    """Team mode's configuration (:func:`dashboard.audience.team_config`), or None: the
    embedded single-user dashboard."""
    return aud.team_config(_secrets(), os.environ)


def _user() -> dict:
    return st.user.to_dict()


#: where the session keeps the identity provider's last answer (no widget has this key)
RECHECK_KEY = "_login_recheck"
#: seconds before a failed re-check is tried again
RETRY_SECONDS = 30


def _recheck(config: aud.Team) -> aud.Recheck | None:
    """With login configured, the identity provider's answer for this login, re-read at most
    ``config.recheck_seconds`` apart (:mod:`dashboard.idp`); None without login."""
    if not login_configured():
        return None
    user = _user()
    if user.get("is_logged_in") is not True:
        return None
    now = time.monotonic()
    kept = st.session_state.get(RECHECK_KEY)
    if kept is not None and kept[0] == user.get("sub") and now < kept[1]:
        return kept[2]
    try:
        token = st.user.tokens.get("access")
    except Exception:  # a Streamlit without tokens, or none exposed
        token = None
    result = idp.recheck(idp.metadata_url(_secrets()["auth"]), token, user.get("sub"))
    wait = config.recheck_seconds if result.claims is not None else \
        min(RETRY_SECONDS, config.recheck_seconds)
    st.session_state[RECHECK_KEY] = (user.get("sub"), now + wait, result)
    if result.claims is None:
        log.warning("login re-check failed for %s: %s", aud.who(user), result.error)
    return result


def audience() -> str | None:
    """This person's audience in team mode (``internal``, ``publishable`` or ``none``,
    from the group claim as the identity provider last re-confirmed it,
    :func:`dashboard.audience.audience_of`); None in the embedded dashboard.  Worked out on
    every call, never kept where a widget or URL could change it."""
    config = team()
    return None if config is None else aud.audience_of(config, _user(), _recheck(config))


def identity() -> str | None:
    """The logged-in person as the labels record them (the email claim, else the subject),
    as the sidebar's "Signed in as" shows them; None without login."""
    user = _user()
    if user.get("is_logged_in") is not True:
        return None
    value = user.get("email") or user.get("sub")
    return str(value) if value else None


def audience_note() -> str | None:
    """What this person is told when the provider's answer limits their audience."""
    config = team()
    return None if config is None else aud.audience_note(config, _user(), _recheck(config))


def db_path() -> str:
    """The warehouse file this dashboard reads: in team mode the snapshot of this person's
    audience (never the other one); else ``$HARNESS_WAREHOUSE`` or ./warehouse.duckdb."""
    config = team()
    if config is None:
        return str(Path(default_path()).absolute())
    snapshot = aud.snapshot_for(config, aud.audience_of(config, _user(), _recheck(config)))
    if snapshot is None:
        raise PermissionError("this person's audience reads no snapshot")
    return str(snapshot.absolute())


def record_audit(event: str, what: dict) -> None:
    """In team mode, append ``event`` by this person to the audit log
    (:mod:`dashboard.audit`); nothing in the embedded dashboard."""
    config = team()
    if config is not None:
        audit.record(config.audit_path, aud.who(_user()), event, what)


def _frozen(value):
    if isinstance(value, (list, tuple, set, frozenset)):
        return tuple(_frozen(v) for v in value)
    return value


@st.cache_data(show_spinner=False, max_entries=512)
def _query(name: str, stamp: str, path: str, args: tuple, kwargs: tuple):
    log.debug("query %s (stamp %s)", name, stamp)
    return getattr(queries, name)(*args, db_path=path, **dict(kwargs))


def load(name: str, *args, **kwargs):
    """``warehouse.queries.<name>(*args, **kwargs)`` on this dashboard's warehouse, cached
    until the warehouse changes."""
    if name not in LOADERS:
        raise ValueError(f"unknown loader {name!r}; expected one of {sorted(LOADERS)}")
    path = db_path()
    return _query(name, change_stamp(path), path, _frozen(args),
                  tuple(sorted((k, _frozen(v)) for k, v in kwargs.items())))


def withheld_note(view: str) -> None:
    """In the publishable view: how many runs and corpora it withholds (not tier A), so
    rows never vanish silently from a page."""
    if view != "publishable":
        return
    held = load("withheld_summary", "publishable")
    if not held["runs"]:
        return
    runs, corpora = len(held["runs"]), len(held["corpora"])
    st.info(f"{runs} run{'s' if runs != 1 else ''} / {corpora} "
            f"{'corpora' if corpora != 1 else 'corpus'} withheld (not tier A): "
            f"{', '.join(md_text(c) for c in held['corpora'])}. The internal view in "
            "the sidebar shows them (never publish).", icon=":material/visibility_off:")


@st.cache_data(show_spinner=False, max_entries=64)
def _export_files(stamp: str, path: str, args: tuple):
    from dashboard.downloads import export_files

    return export_files(path, *args)


def export_files(view: str, runs=(), corpora=(), classes=(), measures=(), control=None,
                 columns: int = 1):
    """:func:`dashboard.downloads.export_files` on this dashboard's warehouse (every format
    and the provenance, or why a publishable export was refused), cached until the
    warehouse changes.  An internal export outside the internal audience is refused."""
    if view not in views():
        return False, "refused: this login may not export the internal view"
    path = db_path()
    return _export_files(change_stamp(path), path, (view, _frozen(runs), _frozen(corpora),
                                                    _frozen(classes), _frozen(measures),
                                                    control, columns))


def not_a_database(path) -> str | None:
    """Why the file at ``path`` cannot be a DuckDB warehouse (zero bytes, or no DuckDB
    header), or None when it may be one.  Reads 12 bytes, takes no lock."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(12)
    except OSError:
        return None
    if not head:
        return "is empty (zero bytes)"
    if head[8:12] != DUCKDB_MAGIC:
        return "is not a DuckDB database file"
    return None


def broken_guidance(path: str, why: str) -> None:
    """What to do about a warehouse file that is not a database: move it aside (it is
    never deleted for the user) and fill a new one."""
    st.error(f"The warehouse file {md_code(path)} {why}: the dashboard cannot read it.")
    st.info("Move it aside (nothing is deleted) and fill a new warehouse:")
    st.code(f"mv {shlex.quote(path)} {shlex.quote(path + '.broken')}\n" + FILL_COMMANDS,
            language="bash")


def title(name: str, purpose: str) -> None:
    """A page's title and, right under it, its one-line purpose."""
    st.title(name)
    st.caption(purpose)


def terms(*names: str) -> None:
    """An expander defining the glossary terms a page uses (:mod:`dashboard.glossary`)."""
    from dashboard.glossary import TERMS

    with st.expander("Terms used here"):
        st.markdown("\n".join(f"- **{md_text(n)}**: {md_text(TERMS[n])}" for n in names))
        st.caption("Every term: the Glossary page.")


def static_table(frame, wrap=(), style=None) -> None:
    """``frame`` as a static table whose cells wrap, shown whole (``st.table``), unlike
    ``st.dataframe``, which cuts a long text at its column's width.  ``st.table`` reads
    Markdown in its cells, so every text cell and heading goes through :func:`md_text`;
    the ``wrap`` columns may break anywhere (a checksum has no space to break at).
    ``style``: a function given the Styler and returning it (cell colours)."""
    shown = frame.map(lambda v: md_text(v) if isinstance(v, str) else v)
    shown.columns = [md_text(c) for c in frame.columns]
    styler = shown.style.hide(axis="index")
    if wrap:
        # the text sits in a Markdown paragraph inside each cell, which sets its own wrapping
        positions = [list(frame.columns).index(c) for c in wrap]
        styler = styler.set_table_styles([{"selector": f"td.col{i} p",
                                           "props": "overflow-wrap: anywhere;"}
                                          for i in positions])
        styler = styler.set_properties(subset=[md_text(c) for c in wrap], **{"min-width": "20em"})
    st.table(style(styler) if style else styler)


def guidance(reason: str) -> None:
    st.info(f"{reason}  \nThe dashboard reads {md_code(db_path())} (set `HARNESS_WAREHOUSE` to "
            "read another file). Fill it with:")
    st.code(FILL_COMMANDS, language="bash")


#: the entrypoint every page is served through
APP_FILE = Path(__file__).resolve().parents[1] / "app.py"
#: set by ``app.py`` on every run and taken by the page it runs: a page that finds it
#: missing was started alone (:func:`run_through_app`)
APP_KEY = "_app_ran"


def run_through_app() -> None:
    """Make sure the entrypoint (``app.py``, with ``st.navigation``) builds every page.

    Streamlit serves a ``pages/`` folder beside the entrypoint as a legacy multipage app
    until the entrypoint has called ``st.navigation``: the first request for a page URL
    after the server starts runs that page file alone, without the sidebar's tier switch.
    Such a page runs the entrypoint in its place (same script run, so widget state is
    kept), which builds the navigation and the sidebar and runs the page asked for; then
    it stops.  Only public Streamlit calls are used.
    """
    if st.session_state.pop(APP_KEY, False):
        return
    runpy.run_path(str(APP_FILE), run_name="__main__")
    st.stop()


def run(render: Callable[[], None]) -> None:
    """Render a page; a missing, busy, out-of-date or failing warehouse becomes a message
    with the command that fixes it, never a traceback."""
    run_through_app()
    try:
        render()
    except WarehouseMissing:
        guidance(f"There is no warehouse at {md_code(db_path())} yet.")
    except WarehouseBusy as exc:
        st.warning(f"{md_text(exc)}. The harness is writing a run; this page reads again on the "
                   "next refresh.")
        st.button("Try again", key="busy_retry")
    except SchemaOutOfDate as exc:
        st.error(md_text(exc))
        from dashboard import hints

        st.code(hints.block(hints.filled(hints.MIGRATE, WAREHOUSE=db_path())), language="bash")
    except WarehouseError as exc:
        why = not_a_database(db_path())
        if why is not None:
            broken_guidance(db_path(), why)
        else:
            st.error(f"The warehouse could not answer: {md_text(exc)}")


def require_runs() -> dict:
    """The warehouse's health; stops the page with guidance when it holds no run."""
    health = load("health")
    if not health["runs"]:
        guidance(f"The warehouse at {md_code(db_path())} holds no runs yet.")
        st.stop()
    return health


def visible_runs(view_name: str) -> tuple[list[str], dict[str, str]]:
    """The runs with metric rows in ``view_name``, oldest first, and their labels."""
    options = load("choices", view_name)
    runs = load("runs")
    shown = set(options["run_id"])
    ordered = [r for r in runs["run_id"] if r in shown]
    return ordered, run_labels(runs[runs["run_id"].isin(shown)])


# --------------------------------------------------------------------------- the tier view


def percentile_colour():
    """The colour encoding every latency chart uses for p50 / p95 / p99."""
    import altair as alt

    # the legend's swatches are drawn opaque and large, whatever the marks' opacity (the
    # bands are drawn at 0.15-0.25, which left their swatches nearly invisible)
    return alt.Color("percentile:N", title="percentile",
                     scale=alt.Scale(domain=list(PERCENTILE_COLOURS),
                                     range=list(PERCENTILE_COLOURS.values())),
                     legend=alt.Legend(symbolOpacity=1, symbolType="square", symbolSize=180,
                                       symbolStrokeWidth=0, labelFontSize=13,
                                       titleFontSize=13))


def views() -> tuple[str, ...]:
    """The tier views this person may choose: both in the embedded dashboard and for the
    internal audience, publishable only for the publishable audience, none for ``none``."""
    return aud.views_for(audience())


def view() -> str:
    """The tier view chosen in the sidebar (publishable unless switched, and publishable
    whatever the session holds for a person outside the internal audience)."""
    value = st.session_state.get(VIEW_KEY)
    allowed = views()
    return value if value in allowed else "publishable"


def _filters() -> dict:
    """The widget values this run starts with (the page's filters), as JSON-able values."""
    shown = {}
    for key, value in st.session_state.to_dict().items():
        if isinstance(key, str) and not key.startswith("_") and not key.startswith("download_"):
            if isinstance(value, (str, int, float, bool, type(None))):
                shown[key] = value
            elif isinstance(value, (list, tuple, set, frozenset)):
                shown[key] = [v if isinstance(v, (str, int, float, bool)) else str(v)
                              for v in value]
    return dict(sorted(shown.items()))


def audit_view(page: str) -> None:
    """Before a page shows the internal view in team mode: record who, the page and its
    filters (a view that cannot be recorded is not shown: the write's error stops it)."""
    if audience() is not None and view() == "internal":
        record_audit("view", {"page": page, "view": "internal", "filters": _filters()})


def audit_export(fmt: str, selection: dict) -> None:
    """Record an internal export's download (its format and selection)."""
    record_audit("export", {"view": "internal", "format": fmt, "selection": selection})


def tier_badge(current_view: str, tiers=()) -> None:
    """The badge shown above every table: which view, which tiers it holds."""
    present = sorted({t for t in tiers if isinstance(t, str)})
    if current_view == "publishable":
        st.badge("publishable view · tier A only", icon=":material/public:", color="green")
    else:
        held = ", ".join(present) if present else "none"
        st.badge(f"internal view · tiers {held} · not for publication",
                 icon=":material/lock:", color="orange" if set(present) - {"A"} else "blue")


__all__ = ["MARK_LEGEND", "fmt", "fmt_delta", "fmt_interval", "fmt_p", "fmt_signed", "mark",
           "measure_defaults", "missing", "run_labels", "load", "export_files", "run", "guidance",
           "require_runs", "view", "tier_badge", "db_path", "visible_runs",
           "run_through_app", "CATEGORY_SCHEME", "percentile_colour", "title", "terms",
           "not_a_database", "ICON_SVG", "static_table", "views", "audience", "team",
           "audit_view", "audit_export", "record_audit"]


def certificate_statuses(view: str):
    """Every certificate visible in ``view`` with its live status (expired, alarm ...),
    judged from what the warehouse holds (:mod:`dashboard.certificate_status`)."""
    from dashboard.certificate_status import certificate_statuses as judge

    return judge(*load("certificate_monitoring", view))
