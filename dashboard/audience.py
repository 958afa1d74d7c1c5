"""Team mode's audiences: who may read which snapshot (docs/team.md, "Login").

Pure functions, no streamlit: ``dashboard.common`` feeds them ``st.secrets`` and ``st.user``
and every page is gated through their answers.  Without a team configuration the dashboard
is the embedded single-user one (``$HARNESS_WAREHOUSE``, no login, the tier switch).

An audience is ``internal`` (reads ``DIR/internal.duckdb``: every tier, the tier switch),
``publishable`` (reads ``DIR/publishable.duckdb`` only: tier A, no switch, no internal view
or export) or ``none`` (reads nothing: the login button only).  A logged-in person is
internal when the group claim names one of the internal groups; otherwise publishable.  A
person without login gets the configured ``anonymous`` audience (``publishable`` or
``none``; ``internal`` is refused: an internal reader is always someone).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

INTERNAL, PUBLISHABLE, NONE = "internal", "publishable", "none"
AUDIENCES = (INTERNAL, PUBLISHABLE, NONE)
#: what a person without login may get
ANONYMOUS_AUDIENCES = (PUBLISHABLE, NONE)
#: the snapshot file each reading audience opens (names published by warehouse.snapshots)
SNAPSHOT_FILES = {INTERNAL: "internal.duckdb", PUBLISHABLE: "publishable.duckdb"}
#: the tier views each audience may choose between (first: the default)
VIEWS_OF = {INTERNAL: ("publishable", "internal"), PUBLISHABLE: ("publishable",), NONE: ()}
AUDIT_FILE = "audit.jsonl"
#: the environment variables that configure team mode when secrets.toml has no [team]
ENV = {"snapshots": "HARNESS_TEAM_SNAPSHOTS", "group_claim": "HARNESS_TEAM_GROUP_CLAIM",
       "internal_groups": "HARNESS_TEAM_INTERNAL_GROUPS",
       "anonymous": "HARNESS_TEAM_ANONYMOUS", "audit_log": "HARNESS_TEAM_AUDIT_LOG",
       "recheck_seconds": "HARNESS_TEAM_RECHECK_SECONDS", "store": "HARNESS_TEAM_STORE"}
#: how often (seconds) a login's groups are re-read from the identity provider, by default,
#: and the bounds a configuration may set
RECHECK_SECONDS, RECHECK_BOUNDS = 300, (10, 3600)


class TeamConfigError(ValueError):
    """The team configuration is unusable (named field, and why)."""


@dataclass(frozen=True)
class Team:
    """Team mode's configuration (``[team]`` in ``.streamlit/secrets.toml``, or ``ENV``)."""

    snapshots: Path
    group_claim: str = "groups"
    internal_groups: frozenset[str] = frozenset()
    anonymous: str = NONE
    audit_log: Path | None = None
    recheck_seconds: int = RECHECK_SECONDS
    #: the shared store the Judge page submits labels to (the one the ingester watches);
    #: None: labelling is off in team mode
    store: str | None = None

    @property
    def audit_path(self) -> Path:
        """The append-only audit log: beside the snapshots unless configured."""
        return self.audit_log or self.snapshots / AUDIT_FILE


def _groups(value: Any, where: str) -> frozenset[str]:
    if isinstance(value, str):
        value = [g for g in value.split(",")]
    if not isinstance(value, (list, tuple)) or not all(isinstance(g, str) for g in value):
        raise TeamConfigError(f"{where}: internal_groups must be a list of group names")
    return frozenset(g.strip() for g in value if g.strip())


def team_config(secrets: Mapping[str, Any] | None, env: Mapping[str, str] | None = None
                ) -> Team | None:
    """The team configuration from ``secrets["team"]`` (``.streamlit/secrets.toml``) or, when
    that section is absent, from the ``HARNESS_TEAM_*`` variables in ``env``; None when
    neither names a snapshots directory (the embedded single-user dashboard)."""
    env = os.environ if env is None else env
    section = (secrets or {}).get("team")
    if section is not None:
        where = ".streamlit/secrets.toml [team]"
        raw = {k: section[k] for k in ENV if k in section}
        if "snapshots" not in raw:
            raise TeamConfigError(f"{where}: field 'snapshots' (the snapshots directory) "
                                  "is missing")
    else:
        where = "environment"
        raw = {k: env[v] for k, v in ENV.items() if env.get(v)}
        if "snapshots" not in raw:
            return None
    anonymous = str(raw.get("anonymous", NONE))
    if anonymous not in ANONYMOUS_AUDIENCES:
        raise TeamConfigError(f"{where}: field 'anonymous' must be one of "
                              f"{list(ANONYMOUS_AUDIENCES)}, not {anonymous!r}")
    claim = raw.get("group_claim", "groups")
    if not isinstance(claim, str) or not claim:
        raise TeamConfigError(f"{where}: field 'group_claim' must be a claim name")
    audit = raw.get("audit_log")
    recheck = raw.get("recheck_seconds", RECHECK_SECONDS)
    low, high = RECHECK_BOUNDS
    try:
        recheck = int(recheck)
    except (TypeError, ValueError):
        recheck = -1
    if isinstance(raw.get("recheck_seconds"), bool) or not low <= recheck <= high:
        raise TeamConfigError(f"{where}: field 'recheck_seconds' must be a whole number of "
                              f"seconds from {low} to {high}, not {raw.get('recheck_seconds')!r}")
    return Team(snapshots=Path(str(raw["snapshots"])), group_claim=claim,
                internal_groups=_groups(raw.get("internal_groups", []), where),
                anonymous=anonymous, audit_log=Path(str(audit)) if audit else None,
                recheck_seconds=recheck, store=str(raw["store"]) if raw.get("store") else None)


def claimed_groups(user: Mapping[str, Any], claim: str) -> frozenset[str]:
    """The groups ``user``'s claim names: a list of strings, or one string (a provider that
    sends a single group); anything else names none."""
    value = user.get(claim)
    if isinstance(value, str):
        return frozenset([value])
    if isinstance(value, (list, tuple)):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def group_overage(claims: Mapping[str, Any], claim: str) -> bool:
    """Whether the provider left ``claim`` out for having too many groups to put in a token
    (the OIDC aggregated-claims indicator ``_claim_names`` naming it, as Entra ID does past
    its limit): the groups are then unknown, not absent."""
    names = claims.get("_claim_names")
    return claim not in claims and isinstance(names, Mapping) and claim in names


@dataclass(frozen=True)
class Recheck:
    """What the identity provider answered when a login's groups were re-read: ``claims``
    (the userinfo response) or ``error`` (why there is none)."""

    claims: Mapping[str, Any] | None = None
    error: str | None = None


def audience_of(team: Team, user: Mapping[str, Any] | None,
                recheck: Recheck | None = None) -> str:
    """The audience of ``user`` (``st.user`` as a mapping; None or ``is_logged_in`` false:
    nobody logged in) under ``team``.  With ``recheck`` (login configured), the groups are
    the provider's newest answer, and a failed re-check reads nothing."""
    if not user or user.get("is_logged_in") is not True:
        return team.anonymous
    claims: Mapping[str, Any] = user
    if recheck is not None:
        if recheck.claims is None:
            return NONE
        claims = recheck.claims
    if group_overage(claims, team.group_claim):
        return PUBLISHABLE
    if claimed_groups(claims, team.group_claim) & team.internal_groups:
        return INTERNAL
    return PUBLISHABLE


def audience_note(team: Team, user: Mapping[str, Any] | None,
                  recheck: Recheck | None = None) -> str | None:
    """What a logged-in person is told when their audience is not what their groups would
    give: a failed re-check, or a group list too large for a token; else None."""
    if not user or user.get("is_logged_in") is not True:
        return None
    if recheck is not None and recheck.claims is None:
        return (f"Your login could not be re-checked with the identity provider "
                f"({recheck.error}), so no results are shown. Log out and log in again; if "
                "this persists, ask an administrator.")
    claims = user if recheck is None else recheck.claims or {}
    if group_overage(claims, team.group_claim):
        return (f"Your identity provider sent no '{team.group_claim}' claim: you are in more "
                "groups than fit in a token, so your groups are unknown here and you see "
                "the publishable view only. Ask an administrator to have the token carry "
                "only this application's groups (group filtering).")
    return None


def snapshot_for(team: Team, audience: str) -> Path | None:
    """The one snapshot file ``audience`` reads (None for ``none``)."""
    name = SNAPSHOT_FILES.get(audience)
    return None if name is None else team.snapshots / name


def views_for(audience: str | None) -> tuple[str, ...]:
    """The tier views ``audience`` may choose (None: embedded mode, every view)."""
    return VIEWS_OF[INTERNAL] if audience is None else VIEWS_OF[audience]


def who(user: Mapping[str, Any] | None) -> str:
    """How the audit log names a person: email, else subject, else ``anonymous``."""
    if user and user.get("is_logged_in") is True:
        for key in ("email", "preferred_username", "sub"):
            if isinstance(user.get(key), str) and user[key]:
                return str(user[key])
        return "logged-in (no email or sub claim)"
    return "anonymous"
