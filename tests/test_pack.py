"""The packer on bare integer arrays: it never sees text."""

from __future__ import annotations

from tests.pack import Units, pack


def units(tokens, section=None, heading=(), atomic=(), image=()):
    n = len(tokens)
    return Units(
        tokens=list(tokens),
        section=list(section or [0] * n),
        heading=[i in heading for i in range(n)],
        atomic=[i in atomic for i in range(n)],
        image=[i in image for i in range(n)],
        overlap_ok=[i not in heading and i not in image for i in range(n)],
    )


def test_sections_never_share_content():
    groups = pack(
        units([5, 10, 5, 10], section=[0, 0, 1, 1], heading={0, 2}),
        {0: 100, 1: 100},
        target=50,
        min_tokens=0,
        overlap=0,
    )
    assert [g.units for g in groups] == [[0, 1], [2, 3]]


def test_packs_toward_target_with_overlap():
    # 30 + 1 + 30 = 61 <= 70; a third unit would make 92: close, carry the last unit (31 <= 35).
    # [1, 2] owns only unit 2, and overlap never repeats all of a chunk's own units.
    groups = pack(units([30] * 6), {0: 100}, target=70, min_tokens=0, overlap=35)
    assert [g.units for g in groups] == [[0, 1], [1, 2], [3, 4], [4, 5]]
    assert [g.overlap for g in groups] == [0, 1, 0, 1]
    # overlap 30 cannot carry a 30-token unit plus its separator
    groups = pack(units([30] * 6), {0: 100}, target=70, min_tokens=0, overlap=30)
    assert [g.units for g in groups] == [[0, 1], [2, 3], [4, 5]]


def test_section_that_fits_the_cap_stays_whole():
    groups = pack(units([30] * 3), {0: 100}, target=40, min_tokens=0, overlap=0)
    assert [g.units for g in groups] == [[0, 1, 2]]


def test_atomic_block_stays_with_its_heading_up_to_the_cap():
    u = units([5, 50, 5, 80, 60], heading={0, 2}, atomic={3})
    groups = pack(u, {0: 100}, target=60, min_tokens=0, overlap=0)
    assert [g.units for g in groups] == [[0, 1], [2, 3], [4]]


def test_images_are_chunks_of_their_own():
    groups = pack(
        units([5, 10, 0, 10], heading={0}, image={2}), {0: 100}, target=50, min_tokens=0, overlap=0
    )
    assert [(g.units, g.image) for g in groups] == [([0, 1, 3], False), ([2], True)]


def test_heading_only_group_merges_forward():
    u = units([3, 3, 40], section=[0, 1, 1], heading={0, 1})
    groups = pack(u, {0: 100, 1: 100}, target=30, min_tokens=0, overlap=0)
    assert [g.units for g in groups] == [[0, 1, 2]]


def test_small_tail_merges_back_within_section():
    # 65 | 65 (+11 = 76 > 70 closes) | 10 < 30 merges back: 65 + 1 + 10 = 76 <= 100
    u = units([65, 65, 10])
    groups = pack(u, {0: 100}, target=70, min_tokens=30, overlap=0)
    assert [g.units for g in groups] == [[0], [1, 2]]


def test_cap_is_never_exceeded():
    import random

    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 30)
        toks = [rng.randint(0, 60) for _ in range(n)]
        secs = sorted(rng.randint(0, 3) for _ in range(n))
        head = {i for i in range(n) if rng.random() < 0.2}
        u = units(toks, section=secs, heading=head, atomic={i for i in range(n) if i % 3 == 0})
        cap = {s: 100 for s in secs}
        groups = pack(u, cap, target=70, min_tokens=30, overlap=20)
        for g in groups:
            assert g.tokens <= 100
        # every unit is owned by exactly one chunk, in order (overlap units are repeats)
        owned = [k for g in groups for k in g.units[g.overlap :]]
        assert owned == list(range(n))


def test_a_subsection_that_fits_a_chunk_of_its_own_is_not_cut_after_its_intro():
    # section heading, 60-token paragraph, then a deeper heading (unit 2) with a 10-token
    # intro and a 50-token table: heading and intro alone fit beside the paragraph
    # (60 + 5 + 10 < 100), but the whole subsection (5 + 10 + 50 + separators) does not,
    # and it fits a chunk of its own: the chunk closes before the deeper heading.
    u = units([5, 60, 5, 10, 50], heading={0, 2}, atomic={4})
    groups = pack(u, {0: 120}, target=100, min_tokens=20, overlap=0)
    assert [g.units for g in groups] == [[0, 1], [2, 3, 4]]
    # a subsection too long for a chunk of its own keeps the old rule: its heading and
    # intro still join the current chunk
    u = units([5, 60, 5, 10, 50, 50], heading={0, 2}, atomic={4, 5})
    groups = pack(u, {0: 120}, target=100, min_tokens=20, overlap=0)
    assert [g.units for g in groups][0] == [0, 1, 2, 3]


def test_one_section_within_its_cap_is_one_chunk_as_the_full_packer_makes_it():
    """``pack`` answers a lone section that fits its cap without the packer's passes; the
    groups must be the packer's own, whatever the targets, heading or filler flags."""
    import random

    from tests.pack import Packer

    rng = random.Random(7)
    for _ in range(500):
        n = rng.randint(1, 12)
        u = units(
            [rng.randint(1, 60) for _ in range(n)],
            heading={i for i in range(n) if rng.random() < 0.3},
            atomic={i for i in range(n) if rng.random() < 0.2},
        )
        u.filler = [h or rng.random() < 0.1 for h in u.heading]
        cap = {0: rng.randint(1, 500)}
        target, low, lap = rng.randint(1, 400), rng.randint(0, 200), rng.randint(0, 80)
        parents = rng.choice([None, [-1], [None]])
        fast = pack(u, cap, target, low, lap, parents)
        full = Packer(u, cap, target, low, lap, parents).run()
        assert fast == full
        if sum(u.tokens) + n - 1 <= cap[0]:
            assert [g.units for g in fast] == [list(range(n))]
