"""``--current``'s comparison of two lists by identity, not by position.

A deployed list and the export's are matched element by element on a key (a LiteLLM
deployment's ``model_info.id``, an OmniRoute step's ``provider/model``), so an element
removed from the middle is one difference, not one for every element after it. What
differs is said once per element: not in the export, not deployed, changed, or moved.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from difflib import SequenceMatcher
from typing import TypeVar

T = TypeVar("T")


def _content(item: object) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=repr)


def _pairs(ours: Sequence[T], theirs: Sequence[T],
           key: Callable[[T], Hashable]) -> dict[int, int]:
    """Which deployed element each of ours is (our index → deployed index): the same
    content first (in order, then wherever it moved), then the same key, in order."""
    mine, deployed = [_content(x) for x in ours], [_content(x) for x in theirs]
    paired: dict[int, int] = {}
    matcher = SequenceMatcher(None, mine, deployed, autojunk=False)
    for block in matcher.get_matching_blocks():
        for n in range(block.size):
            paired[block.a + n] = block.b + n
    for of_ours, of_theirs in ((mine, deployed), ([key(x) for x in ours],
                                                  [key(x) for x in theirs])):
        taken = set(paired.values())
        free: dict[Hashable, deque[int]] = {}
        for j, found in enumerate(of_theirs):
            if j not in taken:
                free.setdefault(found, deque()).append(j)
        for i, found in enumerate(of_ours):
            if i not in paired and free.get(found):
                paired[i] = free[found].popleft()
    return paired


def _in_order(paired: dict[int, int]) -> set[int]:
    """Our indexes of a longest run of pairs whose deployed places keep the export's order
    (a longest increasing subsequence, n log n); the other pairs moved."""
    mine = sorted(paired)
    tails: list[int] = []  # deployed place ending the best run of each length
    ends: list[int] = []  # our index ending it
    before: dict[int, int | None] = {}
    for i in mine:
        length = bisect_left(tails, paired[i])
        before[i] = ends[length - 1] if length else None
        if length == len(tails):
            tails.append(paired[i])
            ends.append(i)
        else:
            tails[length], ends[length] = paired[i], i
    kept: set[int] = set()
    at = ends[-1] if ends else None
    while at is not None:
        kept.add(at)
        at = before[at]
    return kept


def by_identity(ours: Sequence[T], theirs: Sequence[T], *, key: Callable[[T], Hashable],
                name: Callable[[T], str], show: Callable[[T], str], same: Callable[[T, T], bool],
                noun: str) -> list[str]:
    """The differences between the export's ``ours`` and the deployed ``theirs``, in the
    export's order, then those only deployed: one line per element that differs.

    Elements are paired by content, else by ``key``; ``name`` says which element a line is
    about, ``show`` what it holds, ``same`` whether a pair routes alike. An element at
    another place relative to the others is ``moved``; places are 1-based, in the export
    and as deployed."""
    paired = _pairs(ours, theirs, key)
    kept = _in_order(paired)
    found: list[str] = []
    for index, mine in enumerate(ours):
        if index not in paired:
            found.append(f"{noun} {index + 1} of the export, {name(mine)}, is not deployed: "
                         f"{show(mine)}")
            continue
        deployed = theirs[paired[index]]
        if index not in kept:
            found.append(f"{noun} {name(mine)} moved: {index + 1} in the export, "
                         f"{paired[index] + 1} deployed")
        if not same(mine, deployed):
            found.append(f"{noun} {name(mine)}: the export has {show(mine)}, deployed is "
                         f"{show(deployed)}")
    matched = set(paired.values())
    for index, deployed in enumerate(theirs):
        if index not in matched:
            found.append(f"{noun} {index + 1} deployed, {name(deployed)}, is not in the "
                         f"export: {show(deployed)}")
    return found
