"""Sorting and filtering the functions: which order a key asks for, and what is said while it waits.

Pure functions of the FDE table's sort and the overview: the FDE table sorts
(`S` by the column picked, `R` the other way, or a click on a title) and
filters (`/`) the functions, at once or once what it needs is made (`Waits`);
the screen applies the order and says what these return.
"""

from __future__ import annotations

from enum import Enum, auto

from sfview.app.widgets.fde_table import COLUMNS, Sort
from sfview.sframe.bulk.overview import Overview

__all__ = ["Waits", "filter_said", "reversed_sort", "sort_said", "waits"]


class Waits(Enum):
    """Whether a sort or a filter was done, or what it waits for."""

    NOT = auto()
    """Done at once."""
    FOR_ORDER = auto()
    """The sort's column has no order yet: the worker is making it."""
    FOR_OVERVIEW = auto()
    """Not every function has been gone through yet."""


def waits(done: bool, overview_ready: bool) -> Waits:
    """What a sort or a filter the FDE table did (`done`) or kept waiting waits for."""
    if done:
        return Waits.NOT
    return Waits.FOR_ORDER if overview_ready else Waits.FOR_OVERVIEW


def reversed_sort(sort: Sort) -> Sort:
    """`R`: the same column, the other way."""
    return Sort(sort.column, not sort.reverse)


def sort_said(sort: Sort, waiting: Waits, overview: Overview) -> str:
    """What the status line says of a sort: done, or what it waits for."""
    title = COLUMNS[sort.column].title
    if waiting is Waits.FOR_ORDER:
        return f"working… the functions sort by {title} once its order is made"
    if waiting is Waits.FOR_OVERVIEW:
        return f"working… the functions sort once every one is read ({_progress(overview)})"
    order = "descending" if sort.reverse else "ascending"
    return f"functions by {title}, {order} (S: another column, R: reverse)"


def filter_said(sort: Sort, waiting: Waits, overview: Overview) -> str | None:
    """What the status line says of a filter that waits (None: done, nothing to say)."""
    if waiting is Waits.FOR_ORDER:  # a sort waits for its column's order: the rows are kept meanwhile
        return sort_said(sort, waiting, overview)
    if waiting is Waits.FOR_OVERVIEW:
        return f"working… the filter applies once every function is read ({_progress(overview)})"
    return None


def _progress(overview: Overview) -> str:
    """How far the overview is: `37% read`."""
    return f"{overview.done * 100 // max(len(overview), 1)}% read"
