"""List arguments on every command line: one convention for every command that takes a list
of measures (``python -m harness score|compare|bench|intervals``, ``python -m warehouse
export``).

``--measures nDCG@10 P@10`` (space-separated), ``--measures nDCG@10,P@10``
(comma-separated) and any mix of the two (``--measures nDCG@10,P@10 MRR``) give the same
list; given twice, the lists add up.  The comma form is safe for measures because no
measure name holds a comma (``harness.core.measures``; the file-level twins are
``file:NAME``); it is not used for paths, corpora or run names, which may.

    p.add_argument("--measures", nargs="+", action=CommaList, default=[...])
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence


def split_items(values: Sequence[str]) -> list[str]:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``: every word split at its commas, each item
    stripped; an empty item (``a,,b``, ``a,`` or ``,``) is refused with a ValueError."""
    items: list[str] = []
    for value in values:
        for item in value.split(","):
            item = item.strip()
            if not item:
                raise ValueError(f"{value!r} holds an empty name (write NAME,NAME or NAME NAME)")
            items.append(item)
    return items


class CommaList(argparse.Action):
    """An ``nargs="+"`` option whose words may also be comma-separated lists (module
    docstring).  The first use replaces the default; a later use adds to the list.  An
    empty item is argparse's usage error (exit 2, naming the option)."""

    def __init__(self, option_strings: Sequence[str], dest: str, nargs: Any = "+",
                 **kwargs: Any) -> None:
        if nargs != "+":
            raise ValueError("CommaList takes nargs='+'")
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        try:
            items = split_items([values] if isinstance(values, str) else list(values))
        except ValueError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        current = getattr(namespace, self.dest, None)
        if current is None or current is self.default:  # the default: replaced, never extended
            setattr(namespace, self.dest, items)
        else:
            setattr(namespace, self.dest, [*current, *items])
