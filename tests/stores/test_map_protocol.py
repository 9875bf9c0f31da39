"""SparseMap against ``dict``'s protocol: a port of CPython's mapping tests.

The tests of ``Lib/test/mapping_tests.py`` (``BasicTestMappingProtocol``,
``TestMappingProtocol``, ``TestHashMappingProtocol``), each named after its
source, rewritten for a map whose keys are integer ids and whose values a
numpy dtype holds, on every index kind and several value dtypes. Adapted:

- string keys (``'a'``, ``'key1'``) become ids; where the source uses a
  string as a key the mapping does not hold, a string is kept: it cannot be
  an id, so it is absent, as for ``dict`` (issue 30);
- values are numbers (or rows) the dtype holds exactly, compared with
  numpy's equality;
- ``fromkeys`` and keyword construction and updates (``update(x=1)``) have
  no counterpart: keys are integers;
- ``test_mutatingiteration``: ``dict`` raises ``RuntimeError``; a map's
  iteration walks a snapshot (documented), so the test checks that instead;
- ``test_repr``: a map's repr is ``SparseMap({...}, size=n)``;
- the hash tests' ``BadEq`` keys cannot be stored (not ids); a key whose
  ``__hash__`` raises still propagates the error from lookups.

The cases of issue 30 follow the port: keys that cannot be ids, copies,
``update``'s protocol, text that does not fit, free column names.
"""

import copy

import numpy as np
import pytest
from numba import njit

from sparseset import ComponentStore, SparseMap, World

KINDS = ["flat", "paged", "hash"]
#: Value dtypes and three values each holds exactly, then a fourth.
DTYPES = {
    "i8": (2, -7, 2**40, 99),
    "f8": (2.5, -0.25, 1e300, 7.0),
    "u1": (2, 0, 255, 9),
    "f4-rows": ((1.0, 2.0), (0.5, -1.0), (3.0, 3.0), (8.0, 9.0)),
}


class Exc(Exception):  # noqa: N818  # the source's name
    """An error a test's helper raises, to see it propagate."""


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


@pytest.fixture(params=list(DTYPES))
def spec(request):
    return request.param


def new_map(kind, spec):
    dtype, shape = ("f4", 2) if spec == "f4-rows" else (spec, ())
    return SparseMap(dtype, shape, index=kind)


def same(a, b):
    return np.array_equal(np.asarray(a), np.asarray(b))


class Reference:
    """The source's ``_reference()``, ``other`` and ``inmapping``: a dict of
    three pairs, a pair not in it, and one of its pairs."""

    def __init__(self, spec):
        v1, v2, v3, v4 = DTYPES[spec]
        self.reference = {1: v1, 10: v2, 2**20: v3}
        self.other = {7: v4}
        self.inmapping = {10: v2}

    def full(self, kind, spec, data=None):
        m = new_map(kind, spec)
        for key, value in (self.reference if data is None else data).items():
            m[key] = value
        return m


@pytest.fixture
def ref(spec):
    return Reference(spec)


def as_dict(m):
    return {k: np.asarray(v).tolist() for k, v in m.items()}


def plain(d):
    return {k: np.asarray(v).tolist() for k, v in d.items()}


# -- BasicTestMappingProtocol ------------------------------------------------


def test_read(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_read"""
    p = new_map(kind, spec)
    d = ref.full(kind, spec)
    for key, value in ref.reference.items():
        assert same(d[key], value)
    (known,) = ref.other
    with pytest.raises(KeyError):
        d[known]
    assert len(p) == 0 and len(d) == len(ref.reference)
    assert all(k in d for k in ref.reference)
    assert not any(k in d for k in ref.other)
    assert p == p and d == d and p != d and d != p
    assert not p and d
    for view, want in (
        (d.keys(), list(ref.reference)),
        (d, list(ref.reference)),
        (d.values(), [np.asarray(v).tolist() for v in ref.reference.values()]),
    ):
        it = iter(view)
        assert hasattr(it, "__next__") and hasattr(it, "__iter__")
        got = [np.asarray(x).tolist() for x in it]
        assert sorted(map(repr, got)) == sorted(map(repr, want))
    assert sorted(as_dict(d).items()) == sorted(plain(ref.reference).items())
    key, value = next(iter(d.items()))
    known, known_value = next(iter(ref.other.items()))
    assert same(d.get(key, known_value), value)
    assert d.get(known, known_value) == known_value
    assert known not in d


def test_write(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_write"""
    p = new_map(kind, spec)
    for key, value in ref.reference.items():
        p[key] = value
        assert same(p[key], value)
    for key in ref.reference:
        del p[key]
        with pytest.raises(KeyError):
            p[key]
    p = new_map(kind, spec)
    p.update(ref.reference)
    assert as_dict(p) == plain(ref.reference)
    items = list(p.items())
    p = new_map(kind, spec)
    p.update(items)
    assert as_dict(p) == plain(ref.reference)
    d = ref.full(kind, spec)
    key, value = next(iter(d.items()))
    known, known_value = next(iter(ref.other.items()))
    assert same(d.setdefault(key, known_value), value)
    assert same(d[key], value)
    assert same(d.setdefault(known, known_value), known_value)
    assert same(d[known], known_value)
    assert same(d.pop(known), known_value)
    assert known not in d
    with pytest.raises(KeyError):
        d.pop(known)
    default = 9
    d[known] = known_value
    assert same(d.pop(known, default), known_value)
    assert known not in d
    assert d.pop(known, default) == default
    key, value = d.popitem()
    assert key not in d
    assert same(value, ref.reference[key])
    with pytest.raises(KeyError):
        new_map(kind, spec).popitem()


def test_constructor(kind, spec):
    """mapping_tests.BasicTestMappingProtocol.test_constructor, and
    TestMappingProtocol's: each empty map is a new object, equal to another."""
    assert new_map(kind, spec) == new_map(kind, spec)
    assert new_map(kind, spec) is not new_map(kind, spec)


def test_bool(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_bool (and TestMappingProtocol's)"""
    assert bool(new_map(kind, spec)) is False
    assert bool(ref.full(kind, spec)) is True


def test_keys(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_keys (and TestMappingProtocol's)"""
    assert list(new_map(kind, spec).keys()) == []
    d = ref.full(kind, spec)
    keys = d.keys()
    assert next(iter(ref.inmapping)) in keys
    assert next(iter(ref.other)) not in keys
    assert "a" not in keys
    with pytest.raises(TypeError):
        d.keys(None)


def test_values(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_values (and TestMappingProtocol's)"""
    d = new_map(kind, spec)
    assert list(d.values()) == []
    with pytest.raises(TypeError):
        d.values(None)
    value = ref.reference[1]
    d[1] = value
    assert [np.asarray(v).tolist() for v in d.values()] == [np.asarray(value).tolist()]
    assert value in d.values()


def test_items(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_items (and TestMappingProtocol's)"""
    d = new_map(kind, spec)
    assert list(d.items()) == []
    with pytest.raises(TypeError):
        d.items(None)
    value = ref.reference[1]
    d[1] = value
    ((key, held),) = list(d.items())
    assert key == 1 and same(held, value)
    assert (1, value) in d.items()
    assert (2, value) not in d.items()


def test_len(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_len (and TestMappingProtocol's)"""
    assert len(new_map(kind, spec)) == 0
    assert len(ref.full(kind, spec, {1: ref.reference[1], 2: ref.reference[1]})) == 2


def test_getitem(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_getitem and
    TestMappingProtocol.test_getitem"""
    d = ref.full(kind, spec)
    ((key, value),) = ref.inmapping.items()
    assert same(d[key], value)
    with pytest.raises(TypeError):
        d.__getitem__()
    v1, v2, v3, v4 = DTYPES[spec]
    d = ref.full(kind, spec, {1: v1, 2: v2})
    d[3] = v3
    d[1] = v4
    assert same(d[3], v3) and same(d[1], v4)
    del d[2]
    assert as_dict(d) == plain({1: v4, 3: v3})


def test_update(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_update and
    TestMappingProtocol.test_update (keyword updates excepted: keys are ints)"""
    d = new_map(kind, spec)
    d.update(ref.other)
    assert as_dict(d) == plain(ref.other)
    d = new_map(kind, spec)
    d.update()
    assert d == new_map(kind, spec)
    d = new_map(kind, spec)
    d.update(ref.other.items())
    assert as_dict(d) == plain(ref.other)
    d = new_map(kind, spec)
    d.update(iter(ref.other.items()))
    assert as_dict(d) == plain(ref.other)
    with pytest.raises((TypeError, AttributeError)):
        d.update(42)
    with pytest.raises(TypeError):
        d.update(x=1)

    outer = ref

    class SimpleUserDict:
        def __init__(self):
            self.d = outer.reference

        def keys(self):
            return self.d.keys()

        def __getitem__(self, i):
            return self.d[i]

    d.clear()
    d.update(SimpleUserDict())
    assert as_dict(d) == plain(ref.reference)

    class FailingKeys:
        def keys(self):
            raise Exc

    d = new_map(kind, spec)
    with pytest.raises(Exc):
        d.update(FailingKeys())

    class FailingKeysIterator:
        def keys(self):
            def keys():
                yield 1
                raise Exc

            return keys()

        def __getitem__(self, key):
            return key

    with pytest.raises(Exc):
        d.update(FailingKeysIterator())

    class FailingGetitem:
        def keys(self):
            return iter(range(1, 27))

        def __getitem__(self, key):
            raise Exc

    with pytest.raises(Exc):
        d.update(FailingGetitem())

    class BadSequence:
        def __iter__(self):
            return self

        def __next__(self):
            raise Exc

    with pytest.raises(Exc):
        d.update(BadSequence())
    with pytest.raises(ValueError):
        d.update([(1, 2, 3)])
    assert len(d) == 0  # nothing of the failed updates stayed

    v1, v2, v3, v4 = DTYPES[spec]
    d = new_map(kind, spec)
    d.update({1: v4})
    d.update({2: v2})
    d.update({1: v1, 2: v2, 3: v3})
    assert as_dict(d) == plain({1: v1, 2: v2, 3: v3})
    d = ref.full(kind, spec, {1: v3, 2: v4})
    d.update(ref.full(kind, spec, {1: v2, 3: v4, 5: v1}).items())
    assert as_dict(d) == plain({1: v2, 2: v4, 3: v4, 5: v1})


def test_get(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_get and
    TestMappingProtocol.test_get"""
    (known,) = ref.other
    for d in (new_map(kind, spec), ref.full(kind, spec)):
        assert d.get(known) is None
        assert d.get(known, 3) == 3
        assert d.get("c") is None
        assert d.get("c", 3) == 3
    d = ref.full(kind, spec)
    ((key, value),) = ref.inmapping.items()
    assert same(d.get(key), value)
    assert same(d.get(key, 3), value)
    with pytest.raises(TypeError):
        d.get()
    with pytest.raises(TypeError):
        d.get(None, None, None)


def test_setdefault(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_setdefault and
    TestMappingProtocol.test_setdefault (numbers for the list values)"""
    d = new_map(kind, spec)
    with pytest.raises(TypeError):
        d.setdefault()
    v1, v2, *_ = DTYPES[spec]
    assert same(d.setdefault(4, v1), v1)
    assert same(d.setdefault(4, v2), v1)
    assert len(d) == 1
    with pytest.raises(TypeError):
        d.setdefault("key", v1)  # setting a key that cannot be an id raises
    assert len(d) == 1


def test_popitem(kind, spec):
    """mapping_tests.BasicTestMappingProtocol.test_popitem and
    TestMappingProtocol.test_popitem (ids for the string keys)"""
    d = new_map(kind, spec)
    with pytest.raises(KeyError):
        d.popitem()
    with pytest.raises(TypeError):
        d.popitem(42)
    row = spec == "f4-rows"
    for copy_mode in (-1, +1):
        for log2size in range(9):
            size = 2**log2size
            a, b = new_map(kind, spec), new_map(kind, spec)
            for i in range(size):
                a[i] = (i % 100, 0) if row else i % 100
                if copy_mode < 0:
                    b[i] = (i % 100, 0) if row else i % 100
            if copy_mode > 0:
                b = a.copy()
            for _ in range(size):
                ka, va = a.popitem()
                assert np.asarray(va).ravel()[0] == ka % 100
                kb, vb = b.popitem()
                assert np.asarray(vb).ravel()[0] == kb % 100
                assert copy_mode > 0 or (ka == kb and same(va, vb))
            assert not a and not b


def test_pop(kind, spec, ref):
    """mapping_tests.BasicTestMappingProtocol.test_pop and
    TestMappingProtocol.test_pop"""
    d = new_map(kind, spec)
    ((k, v),) = ref.inmapping.items()
    d[k] = v
    with pytest.raises(KeyError):
        d.pop(next(iter(ref.other)))
    assert same(d.pop(k), v)
    assert len(d) == 0
    with pytest.raises(KeyError):
        d.pop(k)
    assert d.pop(5, v) == v
    d[5] = v
    assert same(d.pop(5, 1), v)


# -- TestMappingProtocol -------------------------------------------------------


def test_contains(kind, spec, ref):
    """mapping_tests.TestMappingProtocol.test_contains"""
    d = new_map(kind, spec)
    assert "a" not in d and 1 not in d
    d = ref.full(kind, spec, {1: ref.reference[1], 2: ref.reference[1]})
    assert 1 in d and 2 in d and 3 not in d
    with pytest.raises(TypeError):
        d.__contains__()


def test_clear(kind, spec, ref):
    """mapping_tests.TestMappingProtocol.test_clear"""
    d = ref.full(kind, spec)
    d.clear()
    assert d == {}
    with pytest.raises(TypeError):
        d.clear(None)


def test_copy(kind, spec, ref):
    """mapping_tests.TestMappingProtocol.test_copy, and copy.copy as dict's"""
    d = ref.full(kind, spec)
    for c in (d.copy(), copy.copy(d)):
        assert as_dict(c) == plain(ref.reference)
        assert isinstance(c, SparseMap) and c.kind == kind
        c[12345] = ref.reference[1]  # independent of d
        del c[1]
        assert 12345 not in d and 1 in d
    empty = new_map(kind, spec)
    assert empty.copy() == empty
    with pytest.raises(TypeError):
        empty.copy(None)


# -- TestHashMappingProtocol ---------------------------------------------------


class BadHash:
    fail = False

    def __hash__(self):
        if self.fail:
            raise Exc
        return 42


def test_getitem_and_pop_with_a_failing_hash(kind, spec):
    """mapping_tests.TestHashMappingProtocol.test_getitem, test_pop and
    test_setdefault: an error from the key's __hash__ propagates (a BadHash
    cannot be stored, so the map is empty)"""
    d = new_map(kind, spec)
    x = BadHash()
    assert x not in d
    x.fail = True
    with pytest.raises(Exc):
        d[x]
    with pytest.raises(Exc):
        d.pop(x)
    with pytest.raises(Exc):
        d.setdefault(x, 1)


def test_mutatingiteration(kind, spec, ref):
    """mapping_tests.TestHashMappingProtocol.test_mutatingiteration, adapted:
    dict raises RuntimeError; a map walks the pairs held at the start and
    never yields one it no longer holds"""
    d = new_map(kind, spec)
    v1, v2, *_ = DTYPES[spec]
    d[1] = v1
    seen = []
    for i in d:
        seen.append(i)
        d[i + 1] = v1
    assert seen == [1] and sorted(d) == [1, 2]

    d.update({k: v1 for k in range(3, 20)})
    for key in d:
        assert key in d
        d.pop(key + 1, None)  # deleted ahead of the walk: never yielded
    assert sorted(d) == list(range(1, 20, 2))
    model = set(d)
    order = list(d)  # the walk's order: the members' at its start
    for key, value in d.items():
        assert key in d and same(d[key], value)
        d.pop(key + 2, None)
        d[key + 100] = v2  # added: not in the walk
    for key in order:
        if key in model:
            model.discard(key + 2)
            model.add(key + 100)
    assert set(d) == model
    walked, first = [], None
    for value in d.values():
        walked.append(np.asarray(value).tolist())
        if first is None:
            first = list(d)
            d[first[-1]] = v1  # changed ahead of the walk: yielded as it is now
            del d[first[-2]]  # deleted ahead of the walk: never yielded
    assert len(walked) == len(first) - 1
    assert walked[-1] == np.asarray(v1).tolist()


def test_repr(kind, spec, ref):
    """mapping_tests.TestHashMappingProtocol.test_repr, adapted to the
    map's repr"""
    d = new_map(kind, spec)
    assert repr(d) == "SparseMap({}, size=0)"
    d[1] = ref.reference[1]
    assert repr(d).startswith("SparseMap({1: ") and repr(d).endswith("}, size=1)")


def test_eq(kind, spec, ref):
    """mapping_tests.TestHashMappingProtocol.test_eq, rows compared whole"""
    assert new_map(kind, spec) == new_map(kind, spec)
    v1, v2, *_ = DTYPES[spec]
    one = ref.full(kind, spec, {1: v1, 2: v2})
    assert one == ref.full(kind, spec, {2: v2, 1: v1})
    assert one == {1: v1, 2: v2} and {1: v1, 2: v2} == one
    assert one != ref.full(kind, spec, {1: v1, 2: v1})
    assert one != ref.full(kind, spec, {1: v1, 3: v2})
    assert one != {1: v1} and one != {1: v1, "a": v2}
    assert one != [1, 2]


# -- issue 30: keys that cannot be ids are absent ----------------------------

NOT_IDS = [-1, -(2**70), "a", None, 1.5, float("nan"), True, np.True_, b"1"]


@pytest.mark.parametrize("key", NOT_IDS, ids=repr)
def test_a_key_that_cannot_be_an_id_is_absent(kind, key):
    m = SparseMap("f8", index=kind)
    m[[1, 2]] = [1.0, 2.0]
    with pytest.raises(KeyError):
        m[key]
    with pytest.raises(KeyError):
        del m[key]
    with pytest.raises(KeyError):
        m.pop(key)
    assert m.get(key) is None and m.get(key, 0.0) == 0.0
    assert m.pop(key, 5) == 5
    keys = m.keys()
    assert key not in m and key not in keys
    assert (key, 1.0) not in m.items()
    assert m.items() & {(key, 1.0)} == set()
    with pytest.raises(KeyError):
        m.store.get(key)
    assert key not in m.store
    with pytest.raises((TypeError, ValueError)):
        m[key] = 3.0
    assert dict(m.items()) == {1: 1.0, 2: 2.0}


def test_a_key_past_the_index_kind_range_is_absent():
    m = SparseMap("i4")  # flat: ids below 2**31
    assert m.get(2**40, -1) == -1 and 2**40 not in m
    with pytest.raises(KeyError):
        del m[2**40]


def test_a_batch_keeps_its_contract():
    """In a batch, a negative id is a bug upstream: ValueError, as before."""
    m = SparseMap("f8")
    m[[1, 2]] = [1.0, 2.0]
    with pytest.raises(ValueError, match="non-negative"):
        m[[1, -1]]
    with pytest.raises(ValueError, match="non-negative"):
        m.remove([-1])
    with pytest.raises(TypeError):
        m[["a"]]
    assert len(m) == 2


def test_update_reads_an_object_with_keys_through_keys():
    """An object with keys() whose __getitem__ answers any key: only its
    keys are read (iterating it would never end)."""

    class Endless:
        def keys(self):
            return [1, 2]

        def __getitem__(self, key):
            return float(key) * 10

        def __iter__(self):
            raise AssertionError("update iterated the object")

    m = SparseMap("f8")
    m.update(Endless())
    assert dict(m.items()) == {1: 10.0, 2: 20.0}


def test_update_is_all_or_nothing_and_later_pairs_win():
    m = SparseMap("i8")
    m[1] = 5
    m.update([(2, 1), (2, 7), (3, 3)])
    assert dict(m.items()) == {1: 5, 2: 7, 3: 3}
    for bad in ([(4, 1), (-1, 2)], {4: 1, 5: "x"}, [(4, 1), (5, 2**70)]):
        with pytest.raises((TypeError, ValueError)):
            m.update(bad)
        assert dict(m.items()) == {1: 5, 2: 7, 3: 3}


# -- issue 30: text that does not fit its column -------------------------------


@pytest.mark.parametrize(
    ("dtype", "value", "stored"),
    [("U5", "hello world", "hello"), ("S3", b"abcd", b"abc"), ("U3", b"abcd", "abc")],
)
def test_text_longer_than_its_column_raises_and_changes_nothing(dtype, value, stored):
    store = ComponentStore({"name": dtype})
    store.add([1, 2])
    with pytest.raises(ValueError, match=r"column 'name'.*4|column 'name'.*11"):
        store.add(3, name=value)
    with pytest.raises(ValueError, match=r"row 1"):
        store.set([1, 2], name=[value[:2], value])
    with pytest.raises(ValueError, match="characters long"):
        store["name"] = value
    assert len(store) == 2 and store["name"].tolist() == [stored[:0]] * 2
    fits = value[: int(dtype[1:])]
    store.add(3, name=fits)
    assert store.get(3)["name"] == fits if isinstance(fits, str) else True


def test_text_in_a_map_and_a_world_is_checked_too():
    m = SparseMap("U4")
    with pytest.raises(ValueError, match=r"SparseMap values.*'hello'"):
        m[1] = "hello"
    assert len(m) == 0
    w = World()
    w.register("name", "U2")
    e = w.create(1)
    with pytest.raises(ValueError, match="characters long"):
        w.add("name", e, name="abc")
    assert not w.has("name", e[0])


# -- issue 30: column names are free -------------------------------------------

FREE_NAMES = ["size", "index", "ids", "n", "add", "contains", "columns", "dense"]


@njit
def _sum_size_column(t):
    total = 0.0
    rows = t["size"]
    for k in range(t.size):
        total += rows[k]
    return total, t["index"].sum(), t["ids"].sum(), t.index(9)


def test_columns_may_take_the_twins_member_names():
    store = ComponentStore({name: "f8" for name in FREE_NAMES})
    store.add([5, 9], size=[1.5, 2.5], index=[3.0, 4.0], ids=[1.0, 1.0])
    assert store["size"].tolist() == [1.5, 2.5] and store.columns == tuple(FREE_NAMES)
    twin = store.jit
    assert twin.size == 2 and twin["size"].tolist() == [1.5, 2.5]
    assert twin.index(9) == 1 and twin["index"].tolist() == [3.0, 4.0]
    assert twin.ids.tolist() == [5, 9] and twin["ids"].tolist() == [1.0, 1.0]
    assert _sum_size_column(twin) == (4.0, 7.0, 2.0, 1)
    with pytest.raises(KeyError, match="not a column"):
        twin["mass"]


def test_a_world_component_may_be_called_size():
    w = World()
    w.register("size", "f4")
    w.register("index", "i4", shape=(2,))
    e = w.create(3)
    w.add("size", e, size=[1.0, 2.0, 3.0])
    w.add("index", e[1:], index=[[1, 2], [3, 4]])
    assert w.get("size", e[2])["size"] == 3.0
    twin = w["size"].jit
    assert twin.size == 3 and twin["size"].tolist() == [1.0, 2.0, 3.0]

    @njit
    def total(t):
        return t["size"].sum(), t.size

    assert total(twin) == (6.0, 3)
    assert w["index"].jit["index"].tolist() == [[1, 2], [3, 4]]
