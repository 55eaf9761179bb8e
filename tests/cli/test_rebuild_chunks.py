"""How ``cardroom rebuild projector`` cuts the games into chunks (``plan_chunks``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cardroom import projector_rebuild as pr

games = st.lists(st.integers(1, 3000), max_size=400).map(
    lambda sizes: [(f"g{i:04}", n) for i, n in enumerate(sizes)]
)


@given(games, st.integers(0, 4))
def test_chunks_keep_every_game_once_in_order_and_hold_enough_events(
    found: list[tuple[str, int]], workers: int
) -> None:
    chunks = pr.plan_chunks(found, workers)
    assert [g for chunk in chunks for g in chunk] == found
    total = sum(n for _, n in found)
    least = max(pr.CHUNK_EVENTS, total // (max(workers, 1) * pr.CHUNKS_PER_WORKER))
    for chunk in chunks[:-1]:
        # a chunk closes once it holds enough events, or games
        assert sum(n for _, n in chunk) >= least or len(chunk) == pr.CHUNK
        assert sum(n for _, n in chunk[:-1]) < least
    assert all(0 < len(chunk) <= pr.CHUNK for chunk in chunks)


def test_a_large_log_takes_larger_chunks_a_small_one_the_least() -> None:
    small = [(f"g{i}", 300) for i in range(300)]  # 90,000 events
    large = [(f"g{i}", 300) for i in range(3500)]  # 1,050,000 events
    assert len(pr.plan_chunks(small, 2)) == 18  # 5,100 events each: the least
    chunks = pr.plan_chunks(large, 2)
    # a sixteenth of each worker's share: 32,812 events, 110 games of 300
    assert len(chunks) == 32
    assert all(len(c) == 110 for c in chunks[:-1])
