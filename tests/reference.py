"""Naive pure-Python references for the kernels in ``sparseset.kernels``.

Each function has the signature and the documented effect of the kernel of
the same name, but is written the obvious way (Python lists and sets, no
``sparse`` lookups), so that a test can run both on copies of the same input
and compare the results (as stumpy and numbagg test their kernels).

A set is ``(sparse, dense, n)``: ``dense[:n]`` holds the members, and
``sparse[dense[k]] == k`` for ``k < n``; ``sparse`` holds garbage elsewhere.
The references read membership from ``dense[:n]`` only, which is what the
data structure's invariant says membership *is*.

The references mutate ``sparse`` and ``dense`` the way the kernels promise
to, and only where the kernels promise anything; tests compare the promised
parts (see ``tests/test_kernels.py``).
"""

import numpy as np

#: Every integer dtype an id array may have.
INT_DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
]
DTYPE_IDS = [np.dtype(d).name for d in INT_DTYPES]
#: Ids of the default flat index live in [0, FLAT_LIMIT).
FLAT_LIMIT = 2**31

SIGN_BIT = 2**63


def as_ints(ids):
    """The ids of a 1-D integer array as Python ints (no wraparound)."""
    return [int(x) for x in np.asarray(ids).tolist()]


def member_list(sparse, dense, n):
    """The members in dense order."""
    return [int(x) for x in dense[:n].tolist()]


def is_member(sparse, dense, n, x):
    """The membership rule (docs/architecture.md#the-sparse-set), for any int ``x``."""
    x = int(x)
    if not 0 <= x < sparse.shape[0]:
        return False
    p = int(sparse[x])
    return p < n and int(dense[p]) == x


def membership(sparse, dense, n):
    """Membership of every id in ``[0, capacity)``, by the definition."""
    return np.array([is_member(sparse, dense, n, x) for x in range(sparse.shape[0])])


def _write(sparse, dense, seq):
    """Store ``seq`` at ``dense[:len(seq)]`` with ``sparse`` pointing at it."""
    for k, x in enumerate(seq):
        dense[k] = x
        sparse[x] = k


def build(members, removed, capacity, garbage="empty", seed=0):
    """A valid set holding ``members``, with ``removed`` just past ``n``.

    ``removed`` sits at ``dense[n:n + len(removed)]`` with ``sparse``
    pointing at it, as swap-and-pop leaves removed ids. Elsewhere ``sparse``
    and ``dense`` hold garbage of the given kind:

    - ``"empty"``: whatever ``np.empty`` gives;
    - ``"zeros"``: zeros (every non-member points at position 0);
    - ``"random"``: random values over the whole dtype range;
    - ``"adversarial"``: positions below ``n + len(removed)`` in ``sparse``
      and ids below capacity in ``dense``, so that lookups of non-members
      land on real members and removed ids (membership must be proven by
      ``dense``).
    """
    rng = np.random.default_rng(seed)
    if garbage == "empty":
        sparse = np.empty(capacity, np.uint32)
        dense = np.empty(capacity, np.int32)
    elif garbage == "zeros":
        sparse = np.zeros(capacity, np.uint32)
        dense = np.zeros(capacity, np.int32)
    elif garbage == "random":
        sparse = rng.integers(0, 2**32, capacity, dtype=np.uint64).astype(np.uint32)
        dense = rng.integers(-(2**31), 2**31, capacity, dtype=np.int64).astype(np.int32)
    elif garbage == "adversarial":
        bound = len(members) + len(removed) + 1
        sparse = rng.integers(0, bound, capacity).astype(np.uint32)
        dense = rng.integers(0, max(capacity, 1), capacity).astype(np.int32)
    else:
        raise ValueError(garbage)
    _write(sparse, dense, [*members, *removed])
    return sparse, dense, len(members)


# ----------------------------------------------------------------- kernels


def find(sparse, dense, n, x):
    """Position of ``x`` in ``dense[:n]``, -1 if absent."""
    x = int(x)
    for k, y in enumerate(member_list(sparse, dense, n)):
        if y == x:
            return k
    return -1


def push(sparse, dense, n, x):
    dense[n] = x
    sparse[int(x)] = n
    return n + 1


def swap_remove(sparse, dense, n, p):
    seq = [int(x) for x in dense[:n].tolist()]
    seq[p], seq[n - 1] = seq[n - 1], seq[p]
    _write(sparse, dense, seq)
    return n - 1


def add(sparse, dense, n, ids, start=0):
    """Append the non-members of ``ids[start:]`` once each, in batch order.

    Returns ``(new_n, -1)``; or ``(m, k)`` if ``ids[k]`` is the first id
    that is negative or not below capacity, with the ids before it added
    (``m`` counts them) and the members before the batch untouched.
    """
    ids = as_ints(ids)
    capacity = sparse.shape[0]
    seq = member_list(sparse, dense, n)
    present = set(seq)
    stop = -1
    for k in range(start, len(ids)):
        x = ids[k]
        if not 0 <= x < capacity:
            stop = k
            break
        if x not in present:
            present.add(x)
            seq.append(x)
    _write(sparse, dense, seq)
    return len(seq), stop


def upsert(sparse, dense, n, ids, positions, start=0):
    """:func:`add` that also records where each id of ``ids`` lives.

    Unless ``positions`` is empty, ``positions[k]`` receives the dense
    position of ``ids[k]`` for every k from ``start`` up to where the
    batch stopped (new or already a member).
    """
    new_n, stop = add(sparse, dense, n, ids, start)
    if positions.shape[0]:
        pos = {x: k for k, x in enumerate(member_list(sparse, dense, new_n))}
        ints = as_ints(ids)
        for k in range(start, len(ints) if stop < 0 else stop):
            positions[k] = pos[ints[k]]
    return new_n, stop


def discard_rows(sparse, dense, n, ids, rows):
    """:func:`discard` whose removals also move rows of 2-D ``rows`` arrays.

    Each removal at position ``p`` copies the last member's row (of every
    array in the tuple ``rows``) into row ``p``, so that row ``k`` keeps
    belonging to ``dense[k]``.
    """
    seq = [int(x) for x in dense[:n].tolist()]
    m = n
    for x in as_ints(ids):
        try:
            p = seq.index(x, 0, m)
        except ValueError:
            continue
        seq[p], seq[m - 1] = seq[m - 1], seq[p]
        m -= 1
        for column in rows:
            column[p] = column[m]
    _write(sparse, dense, seq)
    return m


def discard(sparse, dense, n, ids):
    """Sequential swap-and-pop of the members of ``ids``; returns new n.

    ``dense[:n]`` (old n) afterwards holds the survivors then the removed
    ids, each at the position swap-and-pop puts it.
    """
    return discard_rows(sparse, dense, n, ids, ())


def _may_be_negative(ids):
    # The kernels OR the ids' int64 bit patterns: a uint64 id at or past 2**63
    # reads as negative too.
    return any(x < 0 or x >= SIGN_BIT for x in as_ints(ids))


def contains(sparse, dense, n, ids, out):
    present = set(member_list(sparse, dense, n))
    for k, x in enumerate(as_ints(ids)):
        out[k] = x in present
    return _may_be_negative(ids)


def index(sparse, dense, n, ids, out):
    pos = {x: k for k, x in enumerate(member_list(sparse, dense, n))}
    for k, x in enumerate(as_ints(ids)):
        out[k] = pos.get(x, -1)
    return _may_be_negative(ids)


def join_rows(keys, sparse, dense, n, rows, found):
    pos = {x: k for k, x in enumerate(member_list(sparse, dense, n))}
    m = 0
    for k, x in enumerate(as_ints(keys)):
        if x in pos:
            rows[m], found[m] = k, pos[x]
            m += 1
    return m


def first_mismatch(sparse, dense, n, ids, want_member):
    present = set(member_list(sparse, dense, n))
    for k, x in enumerate(as_ints(ids)):
        if (x in present) != bool(want_member):
            return k
    return -1


def keep_only(sparse, dense, n, ids):
    """Keep the members found in ``ids``, first in batch order.

    The removed members follow at ``dense[new_n:n]`` (their order there is
    the kernel's business; the reference puts them in dense order).
    """
    seq = member_list(sparse, dense, n)
    present = set(seq)
    kept = [x for x in dict.fromkeys(as_ints(ids)) if x in present]
    keep = set(kept)
    _write(sparse, dense, kept + [x for x in seq if x not in keep])
    return len(kept)


def sort(sparse, dense, n):
    _write(sparse, dense, sorted(member_list(sparse, dense, n)))


def filter_into(
    ids, sparse, dense, n, keep_members, out_sparse, out_dense, out_n, start=0
):
    present = set(member_list(sparse, dense, n))
    seq = member_list(out_sparse, out_dense, out_n)
    for x in as_ints(ids)[start:]:
        if (x in present) == bool(keep_members):
            seq.append(x)
    _write(out_sparse, out_dense, seq)
    return len(seq), -1


def swap_members(sparse, dense, p, q):
    """Exchange the ids at positions ``p`` and ``q``, back-pointers with them."""
    a, b = int(dense[p]), int(dense[q])
    dense[p], dense[q] = b, a
    sparse[b], sparse[a] = p, q


def _swap_rows(rows, p, q):
    for column in rows:
        column[[p, q]] = column[[q, p]]


def pack_front(sparse, dense, n, start, ids, rows):
    """Swap each member of ``ids`` found at or past ``start`` into ``start``.

    ``start`` moves up by one per member moved; members below it (placed
    already, or repeated in ``ids``) and non-members are skipped. Rows of
    every array in ``rows`` move with their ids. Returns the new ``start``.
    """
    seq = member_list(sparse, dense, n)
    for x in as_ints(ids):
        if x in seq[start:]:
            p = seq.index(x)
            seq[p], seq[start] = seq[start], seq[p]
            _swap_rows(rows, p, start)
            start += 1
    _write(sparse, dense, seq)
    return start


def pack_back(sparse, dense, n, end, ids, rows):
    """Swap each member of ``ids`` found below ``end`` into ``end - 1``.

    ``end`` moves down by one per member moved; members at or past it are
    skipped. Rows move with their ids. Returns the new ``end``.
    """
    seq = member_list(sparse, dense, n)
    for x in as_ints(ids):
        if x in seq[:end]:
            p = seq.index(x)
            end -= 1
            seq[p], seq[end] = seq[end], seq[p]
            _swap_rows(rows, p, end)
    _write(sparse, dense, seq)
    return end


# ----------------------------------------------------------- entity handles

INDEX_BITS = 32
INDEX_MASK = 2**32 - 1


def as_int64(value):
    """A Python int wrapped to int64's range, as a 64-bit store would hold it."""
    value &= 2**64 - 1
    return value - 2**64 if value >= SIGN_BIT else value


def handle(index, generation):
    """The int64 handle of ``index`` at ``generation``."""
    return as_int64((int(generation) << INDEX_BITS) | int(index))


def create_entities(generations, alive, free, n_free, count, out):
    """Fill ``out`` with new handles: free indexes last-in first-out, then fresh ones.

    A fresh index starts at generation 0; ``free`` itself is only read.
    Returns ``(n_free, count)`` after the creation.
    """
    stack = [int(i) for i in free[:n_free].tolist()]
    for k in range(out.shape[0]):
        if stack:
            i = stack.pop()
        else:
            i = count
            count += 1
            generations[i] = 0
        alive[i] = True
        out[k] = handle(i, generations[i])
    return len(stack), count


def destroy_entities(generations, alive, free, n_free, indexes, last_generation):
    """Kill the distinct live indexes of ``indexes``; return ``(n_free, killed)``.

    Each victim moves to its next generation and onto the free stack, unless
    it is at ``last_generation``: then it is retired (stays dead, not freed).
    """
    victims = [i for i in dict.fromkeys(as_ints(indexes)) if alive[i]]
    for i in victims:
        alive[i] = False
        if int(generations[i]) < last_generation:
            generations[i] += 1
            free[n_free] = i
            n_free += 1
    return n_free, len(victims)


def is_alive(generations, alive, count, h):
    """Whether the handle ``h`` (any Python int) names a live entity."""
    h = int(h)
    if not 0 <= h < SIGN_BIT:
        return False
    index, generation = h & INDEX_MASK, h >> INDEX_BITS
    return (
        index < count and bool(alive[index]) and int(generations[index]) == generation
    )


def resolve(generations, alive, count, handles, out, dead):
    """``out[k]``: the index of a live ``handles[k]``, else ``dead``.

    Returns the position of the first dead handle, -1 if none.
    """
    first = -1
    for k, h in enumerate(as_ints(handles)):
        if is_alive(generations, alive, count, h):
            out[k] = h & INDEX_MASK
        else:
            out[k] = dead
            if first < 0:
                first = k
    return first


def handles_of(generations, indexes, out):
    for k, i in enumerate(as_ints(indexes)):
        out[k] = handle(i, generations[i])
