"""PyTorch's CPU ``topk`` order, exactly: its kernel (ATen's TopKImpl.h) runs libstdc++'s
``std::partial_sort`` (when ``k * 64 <= n``) or ``std::nth_element`` followed by ``std::sort``
of the first ``k - 1`` (when ``sorted``) over (value, index) pairs. Which of several equal
values comes first, and the order of an unsorted result, are whatever those algorithms leave;
this module replays them step by step (introselect, introsort, heap select, insertion sort) so
that ember's indices are PyTorch's. Only rows whose answer is ambiguous come here (``topk`` uses
NumPy's sort otherwise): it is plain Python, one comparison at a time.
"""
from __future__ import annotations

import math

__all__ = ["topk_row"]

_THRESHOLD = 16     # libstdc++'s _S_threshold


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _median_to_first(q, result, a, b, c, comp) -> None:
    if comp(q[a], q[b]):
        if comp(q[b], q[c]):
            q[result], q[b] = q[b], q[result]
        elif comp(q[a], q[c]):
            q[result], q[c] = q[c], q[result]
        else:
            q[result], q[a] = q[a], q[result]
    elif comp(q[a], q[c]):
        q[result], q[a] = q[a], q[result]
    elif comp(q[b], q[c]):
        q[result], q[c] = q[c], q[result]
    else:
        q[result], q[b] = q[b], q[result]


def _unguarded_partition(q, first, last, pivot, comp) -> int:
    while True:
        while comp(q[first], q[pivot]):
            first += 1
        last -= 1
        while comp(q[pivot], q[last]):
            last -= 1
        if not first < last:
            return first
        q[first], q[last] = q[last], q[first]
        first += 1


def _partition_pivot(q, first, last, comp) -> int:
    mid = first + (last - first) // 2
    _median_to_first(q, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(q, first + 1, last, first, comp)


def _unguarded_linear_insert(q, last, comp) -> None:
    val = q[last]
    nxt = last - 1
    while comp(val, q[nxt]):
        q[last] = q[nxt]
        last = nxt
        nxt -= 1
    q[last] = val


def _insertion_sort(q, first, last, comp) -> None:
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(q[i], q[first]):
            val = q[i]
            q[first + 1:i + 1] = q[first:i]
            q[first] = val
        else:
            _unguarded_linear_insert(q, i, comp)


def _push_heap(q, first, hole, top, value, comp) -> None:
    parent = (hole - 1) // 2
    while hole > top and comp(q[first + parent], value):
        q[first + hole] = q[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[first + hole] = value


def _adjust_heap(q, first, hole, length, value, comp) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(q[first + child], q[first + child - 1]):
            child -= 1
        q[first + hole] = q[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        q[first + hole] = q[first + child - 1]
        hole = child - 1
    _push_heap(q, first, hole, top, value, comp)


def _make_heap(q, first, last, comp) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(q, first, parent, length, q[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(q, first, last, result, comp) -> None:
    value = q[result]
    q[result] = q[first]
    _adjust_heap(q, first, 0, last - first, value, comp)


def _heap_select(q, first, middle, last, comp) -> None:
    _make_heap(q, first, middle, comp)
    for i in range(middle, last):
        if comp(q[i], q[first]):
            _pop_heap(q, first, middle, i, comp)


def _sort_heap(q, first, last, comp) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(q, first, last, last, comp)


def partial_sort(q, first, middle, last, comp) -> None:
    _heap_select(q, first, middle, last, comp)
    _sort_heap(q, first, middle, comp)


def nth_element(q, first, nth, last, comp) -> None:
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last, comp)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last, comp)


def _introsort_loop(q, first, last, depth, comp) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            partial_sort(q, first, last, last, comp)
            return
        depth -= 1
        cut = _partition_pivot(q, first, last, comp)
        _introsort_loop(q, cut, last, depth, comp)
        last = cut


def sort(q, first, last, comp) -> None:
    if first == last:
        return
    _introsort_loop(q, first, last, 2 * _lg(last - first), comp)
    if last - first > _THRESHOLD:
        _insertion_sort(q, first, first + _THRESHOLD, comp)
        for i in range(first + _THRESHOLD, last):
            _unguarded_linear_insert(q, i, comp)
    else:
        _insertion_sort(q, first, last, comp)


def _nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _greater(x, y) -> bool:
    return (_nan(x[0]) and not _nan(y[0])) or x[0] > y[0]


def _less(x, y) -> bool:
    return (not _nan(x[0]) and _nan(y[0])) or x[0] < y[0]


def topk_row(values: list, k: int, largest: bool, sorted: bool) -> list:
    """The indices PyTorch's CPU topk returns for one row (``values`` as Python numbers)."""
    n = len(values)
    if k == 0:
        return []
    q = [(v, j) for j, v in enumerate(values)]
    comp = _greater if largest else _less
    if k * 64 <= n:
        partial_sort(q, 0, k, n, comp)
    else:
        nth_element(q, 0, k - 1, n, comp)
        if sorted:
            sort(q, 0, k - 1, comp)
    return [j for _, j in q[:k]]
