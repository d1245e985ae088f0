"""``tmakit.bounded.make_room``: a full memo table loses its oldest quarter, never the entries just used."""

from tmakit.bounded import make_room


def test_a_full_table_loses_its_oldest_quarter():
    t = {i: i for i in range(8)}
    make_room(t, 8)
    assert list(t) == [2, 3, 4, 5, 6, 7]


def test_a_table_below_its_limit_is_untouched():
    t = {i: i for i in range(7)}
    make_room(t, 8)
    assert len(t) == 7


def test_a_tiny_full_table_loses_one_entry():
    t = {"a": 1, "b": 2}
    make_room(t, 2)
    assert list(t) == ["b"]
