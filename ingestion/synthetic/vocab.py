"""Word lists of the synthetic meeting generator (the product's own; no third-party text).

Topic phrases are the exact multi-word strings the topic gold is re-derived from, so no topic
phrase may contain another (checked by the tests).  Code names build the planted aggregation
phrases; they are invented words that occur nowhere else in the lists.
"""

from __future__ import annotations

TEAMS = ("Logistics", "Payments", "Platform", "Search", "Mobile", "Analytics", "Security",
         "Onboarding", "Billing", "Support", "Growth", "Infrastructure", "Marketplace",
         "Identity", "Finance", "Compliance")

KINDS = ("sprint retrospective", "design review", "weekly sync", "planning session",
         "incident review", "architecture review")

FIRST_NAMES = (
    "Dana", "Priya", "Marcus", "Elena", "Tomasz", "Aisha", "Jonas", "Mei", "Rafael", "Ingrid",
    "Kwame", "Sofia", "Hiroshi", "Leila", "Owen", "Noor", "Mateo", "Freya", "Arjun", "Chloe",
    "Emeka", "Hanna", "Diego", "Yara", "Luca", "Amara", "Viktor", "Rosa", "Samir", "Tess",
    "Bjorn", "Zainab", "Felix", "Imani", "Kenji", "Lucia", "Nikolai", "Ayla", "Caleb", "Mira",
)

LAST_NAMES = (
    "Whitfield", "Raman", "Okafor", "Lindqvist", "Kowalski", "Haddad", "Brandt", "Tanaka",
    "Moreau", "Castillo", "Mensah", "Novak", "Fitzgerald", "Petrov", "Quinn", "Sato",
    "Alvarez", "Eriksen", "Baptiste", "Kaur", "Nakamura", "Oyelaran", "Varga", "Holm",
    "Delgado", "Achebe", "Sorensen", "Ibrahim", "Costa", "Reyes", "Lund", "Mbeki",
    "Pereira", "Abara", "Winslow", "Duarte", "Kimura", "Falk", "Osei", "Marchetti",
)

#: topic phrase -> words the discussion of it uses
TOPICS: dict[str, tuple[str, ...]] = {
    "carrier rate card": ("carriers", "rates", "surcharge", "lanes", "quote", "freight"),
    "on-call rotation": ("pager", "shifts", "handover", "weekend", "escalation", "coverage"),
    "error budget": ("availability", "burn", "outages", "target", "alerts", "headroom"),
    "release checklist": ("sign-off", "smoke", "tests", "rollback", "freeze", "tagging"),
    "vendor contract": ("renewal", "clauses", "pricing", "legal", "terms", "notice"),
    "onboarding survey": ("responses", "questions", "drop-off", "sample", "feedback", "week-one"),
    "search relevance dashboard": ("clicks", "queries", "ranking", "judgements", "panels", "ctr"),
    "fraud rules engine": ("chargebacks", "thresholds", "velocity", "blocks", "reviews", "signals"),
    "mobile crash reporter": ("stack", "traces", "symbols", "devices", "crashes", "builds"),
    "data retention schedule": ("archives", "deletion", "backups", "months", "requests", "storage"),
    "hiring pipeline": ("candidates", "interviews", "loop", "offers", "referrals", "panel"),
    "quarterly roadmap": ("milestones", "themes", "bets", "scope", "dependencies", "quarter"),
    "api rate limiter": ("quotas", "throttling", "bursts", "tokens", "clients", "limits"),
    "customer escalation queue": ("tickets", "severity", "backlog", "triage", "sla", "owners"),
    "cloud cost report": ("spend", "instances", "reservations", "savings", "tags", "invoice"),
    "design system tokens": ("colours", "spacing", "typography", "components", "themes", "contrast"),
    "warehouse slotting plan": ("bins", "pickers", "aisles", "velocity", "layout", "replenishment"),
    "invoice reconciliation job": ("ledger", "mismatches", "batches", "exports", "totals", "accruals"),
    "feature flag cleanup": ("toggles", "stale", "owners", "removal", "defaults", "experiments"),
    "penetration test findings": ("vulnerabilities", "patches", "severity", "scanner", "exposure", "fixes"),
    "support macro library": ("templates", "replies", "tone", "articles", "agents", "snippets"),
    "database migration runbook": ("schema", "replicas", "cutover", "downtime", "backfill", "locks"),
    "accessibility audit": ("screen", "readers", "labels", "keyboard", "focus", "captions"),
    "latency regression": ("p95", "traces", "profiles", "spikes", "caches", "timeouts"),
    "partner onboarding kit": ("guides", "sandbox", "credentials", "webhooks", "checklists", "partners"),
    "sprint velocity chart": ("points", "estimates", "carryover", "capacity", "burndown", "stories"),
    "push notification cadence": ("opens", "opt-outs", "timing", "segments", "copy", "frequency"),
    "incident postmortem template": ("timeline", "causes", "actions", "owners", "blameless", "follow-ups"),
    "storage tiering proposal": ("hot", "cold", "objects", "lifecycle", "costs", "retrieval"),
    "checkout conversion funnel": ("baskets", "abandonment", "steps", "payments", "drop-off", "variants"),
    "single sign-on rollout": ("identity", "providers", "sessions", "logins", "claims", "tenants"),
    "month-end close": ("journals", "approvals", "variances", "deadlines", "controls", "entries"),
    "seller rating model": ("reviews", "scores", "weights", "outliers", "sellers", "appeals"),
    "kubernetes upgrade plan": ("clusters", "nodes", "drains", "versions", "charts", "canaries"),
    "referral programme": ("rewards", "codes", "invites", "payouts", "abuse", "cohorts"),
    "audit evidence tracker": ("controls", "samples", "auditors", "exceptions", "owners", "deadlines"),
    "offline sync mode": ("conflicts", "queues", "devices", "retries", "storage", "merges"),
    "pricing experiment": ("variants", "elasticity", "cohorts", "revenue", "guardrails", "tiers"),
    "status page wording": ("outages", "updates", "tone", "subscribers", "components", "banners"),
    "password reset flow": ("emails", "tokens", "lockouts", "links", "expiry", "support"),
}

GENERAL_WORDS = ("numbers", "timeline", "plan", "owners", "next steps", "risks", "budget",
                 "estimate", "status", "blockers")
VERBS = ("revisit", "tighten", "simplify", "document", "prioritise", "split", "test", "review",
         "automate", "pause")
ADJECTIVES = ("fine", "shaky", "better", "late", "tight", "promising", "messy", "stable",
              "unclear", "on track")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "next week", "the end of the month")

#: sentences spoken about a topic; {w}/{w2} are the topic's own words
TOPIC_SENTENCES = (
    "I think the {w} needs another pass.",
    "We could {verb} the {w} by {day}.",
    "The {w} look {adj} this week.",
    "Can someone {verb} the {w} and the {w2}?",
    "My worry is still the {w}, honestly.",
    "Let's {verb} that and look at the {w} again.",
    "Okay, so the {w} are {adj} for now.",
    "I spoke to {person} about the {w} yesterday.",
    "If we {verb} the {w} we lose some of the {w2}.",
    "I'd rather {verb} the {w} first and leave the {w2} alone.",
    "The {w2} depend on the {w}, so order matters here.",
    "We said the same about the {w} last time.",
)

#: a sentence that names the topic phrase itself ({topic})
MENTION_SENTENCES = (
    "On the {topic}, I think the {w} are {adj}.",
    "About the {topic}: we should {verb} the {w}.",
    "So for the {topic}, the {w} need an owner.",
    "The {topic} is where I'd {verb} first.",
    "Quick one on the {topic}, the {w} changed again.",
    "For the {topic} we still have to {verb} the {w2}.",
)

OPENERS = ("Morning, everyone.", "Hi all, can you hear me okay?", "Hello, sorry I'm a minute late.",
           "Hey, good to see everyone.", "Hi, I'm here.", "Afternoon, all.")
CLOSERS = ("Okay, I think that's everything. Thanks, all.", "Great, let's wrap up there.",
           "Thanks, everyone, talk soon.", "Good, we're done a bit early then.")
BACKCHANNELS = ("Mm-hmm.", "Yeah.", "Right.", "Okay.", "Sure.", "Uh-huh.", "Yeah, yeah.", "Got it.")

#: invented code names for planted aggregation phrases
CODE_FIRST = ("Cedar", "Quartz", "Falcon", "Juniper", "Cobalt", "Saffron", "Tundra", "Marlin",
              "Basalt", "Heron", "Ember", "Glacier", "Orchid", "Pewter", "Sable", "Topaz",
              "Willow", "Zephyr", "Aspen", "Birch")
CODE_SECOND = ("Lantern", "Harbor", "Meridian", "Beacon", "Compass", "Anvil", "Summit", "Prism",
               "Keystone", "Lattice", "Atlas", "Cascade", "Ridge", "Vertex", "Quiver", "Spindle")
PHRASE_NOUNS = ("compliance audit", "vendor review", "pricing pilot", "partner integration",
                "security assessment", "capacity forecast", "localisation effort", "loyalty scheme")
EVENT_NOUNS = ("migration", "rollout", "launch", "cutover", "upgrade", "rebrand")

#: sentences that plant an aggregation phrase ({phrase}); R5 plants the event ({event})
PLANT_SENTENCES = (
    "Also, the {phrase} came up with finance again.",
    "One more thing: the {phrase} needs a decision soon.",
    "Side note, I read the notes on the {phrase}.",
    "We should loop legal into the {phrase}.",
)
EVENT_SENTENCES = (
    "For the record, we deferred the {event} again.",
    "As of today we deferred the {event} one more sprint.",
)
#: each holds the event twice (a turn can hold it twice; the count is per occurrence)
DOUBLE_EVENT_SENTENCES = (
    "We deferred the {event} in the spring and then we deferred the {event} again after that.",
    "Honestly, we deferred the {event} for the audit and we deferred the {event} for the freeze.",
)
