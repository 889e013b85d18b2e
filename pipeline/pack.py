"""The packer: groups units into chunks. It sees only small integer arrays, never text.

Rules (README "Packing rules" states them for users):
1. Units of different sections never share a chunk's content; a new section starts a chunk.
   A section whose units fit within its ``cap`` stays whole, one chunk (a complete section
   is the best retrieval unit); ``target`` steers how longer sections are cut.
2. Otherwise units are added in order while the chunk stays within ``target``. Past
   ``target`` a chunk still grows up to its section's ``cap`` when it holds only headings
   so far, or when the next unit is atomic and directly follows a heading (never orphan a
   table from its title).
3. A deeper heading (not a section boundary) starts a new chunk when the current chunk is
   already ``min_tokens`` or more and the heading with its first block would pass ``target``.
4. When a chunk closes because of size, the next one starts with the largest suffix of the
   previous chunk's units (never all of them) that fits ``overlap`` and holds no heading,
   front matter or image; the suffix shrinks if needed to fit ``cap``.
5. Images are chunks of their own.
6. Merging, after packing: a chunk of headings only merges forward into the next chunk when
   that fits the next chunk's cap (empty sections merge forward), else backward; a chunk under
   ``min_tokens`` merges with the next chunk of the same section when that fits, else with
   the previous chunk of the same section.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

SEP = 1  # tokens charged for the blank line between two units


@dataclass
class Units:
    tokens: list[int]
    section: list[int]
    heading: list[bool]
    atomic: list[bool]
    image: list[bool]
    overlap_ok: list[bool]


@dataclass
class Group:
    units: list[int]
    section: int
    overlap: int = 0  # leading units repeated from the previous group
    image: bool = False
    tokens: int = 0  # size of units, kept up to date as units come and go
    texts: int = 0  # units that are not headings (overlap units never are)

    def empty(self) -> bool:
        """Only headings of its own: an empty section."""
        return self.texts == self.overlap


@dataclass
class Packer:
    u: Units
    cap: dict[int, int]
    target: int
    min_tokens: int
    overlap: int
    groups: list[Group] = field(default_factory=list)
    whole: set[int] = field(default_factory=set)  # sections that fit in one chunk

    def size(self, units: list[int]) -> int:
        return sum(self.u.tokens[i] for i in units) + SEP * max(len(units) - 1, 0)

    def run(self) -> list[Group]:
        cur: Group | None = None
        n = len(self.u.tokens)
        members: dict[int, list[int]] = {}
        for i in range(n):
            if not self.u.image[i]:
                members.setdefault(self.u.section[i], []).append(i)
        self.whole = {s for s, m in members.items() if self.size(m) <= self.cap[s]}
        for i in range(n):
            sec = self.u.section[i]
            if self.u.image[i]:
                self.groups.append(Group([i], sec, image=True))
                continue
            if cur is None or cur.section != sec:
                if cur is not None:
                    self._close(cur, None)
                cur = Group([], sec)
            cur = self._place(cur, i, n)
        if cur is not None:
            self._close(cur, None)
        self._merge()
        self.groups.sort(key=lambda g: g.units[g.overlap])
        for g in self.groups:
            g.tokens = 0 if g.image else self.size(g.units)
        return self.groups

    def _own(self, g: Group) -> list[int]:
        return g.units[g.overlap :]

    def _place(self, cur: Group, i: int, n: int) -> Group:
        u, cap = self.u, self.cap[cur.section]
        if cur.section in self.whole:
            self._append(cur, i)
            return cur
        # kept up to date, never summed or sliced again per unit (that is quadratic)
        has_own, total = len(cur.units) > cur.overlap, cur.tokens
        cost = u.tokens[i] + (SEP if cur.units else 0)
        target = min(self.target, cap)
        if has_own and total + cost > target:
            keeps_title = u.heading[cur.units[-1]] and u.atomic[i]
            if not ((cur.empty() or keeps_title) and total + cost <= cap):
                cur = self._close(cur, i)
        elif has_own and u.heading[i] and total >= self.min_tokens and not cur.empty():
            nxt = u.tokens[i + 1] + SEP if i + 1 < n and u.section[i + 1] == cur.section else 0
            if total + cost + nxt > target:
                cur = self._close(cur, None)
        while cur.overlap and cur.tokens + SEP + u.tokens[i] > cap:
            first = cur.units.pop(0)
            cur.tokens -= u.tokens[first] + (SEP if cur.units else 0)
            cur.overlap -= 1
            cur.texts -= 1
        self._append(cur, i)
        return cur

    def _append(self, cur: Group, i: int) -> None:
        cur.tokens += self.u.tokens[i] + (SEP if cur.units else 0)
        cur.texts += not self.u.heading[i]
        cur.units.append(i)

    def _close(self, cur: Group, nxt: int | None) -> Group:
        """Finish ``cur``; return the next group (with overlap when closing for size)."""
        if self._own(cur):
            self.groups.append(cur)
        new = Group([], cur.section)
        if nxt is None or not self.overlap:
            return new
        own = self._own(cur)
        suffix: list[int] = []
        acc = 0
        for k in reversed(own[1:]):
            if not self.u.overlap_ok[k] or acc + self.u.tokens[k] + SEP > self.overlap:
                break
            suffix.insert(0, k)
            acc += self.u.tokens[k] + SEP
        new.units, new.overlap, new.tokens = suffix, len(suffix), self.size(suffix)
        new.texts = len(suffix)
        return new

    def _merge(self) -> None:
        """Rule 6: empty sections merge forward (else back); small chunks merge in-section.
        ``done`` holds the chunks before the one looked at, ``rest`` it and those after (a
        chunk that grew is looked at again); no list is copied or cut per merge."""
        done: list[Group] = []
        rest = deque(g for g in self.groups if not g.image)
        while rest:
            g = rest[0]
            empty = g.empty()
            if empty or g.tokens < self.min_tokens:
                if len(rest) > 1 and self._absorb(g, rest[1], empty, forward=True):
                    rest.popleft()
                    continue
                if done and self._absorb(g, done[-1], empty, forward=False):
                    rest.popleft()
                    rest.appendleft(done.pop())  # look at the grown chunk again
                    continue
            done.append(rest.popleft())
        self.groups = done + [g for g in self.groups if g.image]

    def _own_size(self, g: Group) -> int:
        """Size of g's own units (g.tokens less its overlap and the separator after it)."""
        if not g.overlap:
            return g.tokens
        return g.tokens - self.size(g.units[: g.overlap]) - SEP

    def _absorb(self, g: Group, other: Group, any_section: bool, forward: bool) -> bool:
        """Move g's units into its neighbour ``other`` when allowed and within the cap."""
        if not (any_section or other.section == g.section):
            return False
        if forward:  # other's overlap repeated g's tail: drop it
            first, second = g, other
        else:
            first, second = other, g
        tokens = first.tokens + self._own_size(second) + SEP
        if tokens > self.cap[other.section]:
            return False
        texts = first.texts + second.texts - second.overlap
        other.units = first.units + self._own(second)
        other.tokens, other.texts = tokens, texts
        if forward:
            other.overlap = g.overlap
        return True


def pack(
    units: Units, cap: dict[int, int], target: int, min_tokens: int, overlap: int
) -> list[Group]:
    return Packer(units, cap, target, min_tokens, overlap).run()
