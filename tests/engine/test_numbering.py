"""The numbering of notifications: a :class:`~cardroom_engine.numbering.Tally` of a run of
counted events numbers each player's notifications exactly as counting them one by one."""

from __future__ import annotations

from cardroom_engine import numbering
from hypothesis import given
from hypothesis import strategies as st

PLAYERS = ("a", "b", "c")
# an addressee list is one of a few shared objects (as a reader decodes equal lists once)
# or a list of its own
SHARED = [list(PLAYERS), ["a"], ["b", "c"], []]
addressees = st.one_of(
    st.sampled_from(SHARED),
    st.lists(st.sampled_from(PLAYERS), unique=True),
)


@given(
    st.lists(addressees, max_size=60), st.dictionaries(st.sampled_from(PLAYERS), st.integers(0, 9))
)
def test_a_tally_numbers_as_counting_one_by_one(
    events: list[list[str]], start: dict[str, int]
) -> None:
    one_by_one = dict(start)
    for sent_to in events:
        numbering.count(one_by_one, sent_to)
    tallied = dict(start)
    tally = numbering.Tally()
    for sent_to in events:
        tally.add(sent_to)
    tally.into(tallied)
    assert tallied == one_by_one
    tally.into(tallied)  # emptied by into: nothing counted twice
    assert tallied == one_by_one


def test_a_tally_counts_a_shared_list_once_per_event() -> None:
    seqs: dict[str, int] = {}
    tally = numbering.Tally()
    shared = ["a", "b"]
    for _ in range(3):
        tally.add(shared)
    tally.add(["a", "b"])  # equal, not the same object: its own run, the same numbers
    tally.into(seqs)
    assert seqs == {"a": 4, "b": 4}
