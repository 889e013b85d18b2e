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
   already ``min_tokens`` or more and the heading with its first block would pass ``target``,
   or the heading with all its blocks (up to the next heading) would pass ``target`` here
   but fits within it in a chunk of its own: a subsection is not cut between its intro and
   the table or list after it when it could have stayed whole.
4. When a chunk closes because of size, the next one starts with the largest suffix of the
   previous chunk's units (never all of them) that fits ``overlap`` and holds no heading,
   front matter or image; the suffix shrinks if needed to fit ``cap``.
5. Images are chunks of their own.
6. Merging, after packing: a chunk of headings only (or of headings and filler: link
   reference definitions, comments) merges forward into the next chunk when that fits the
   next chunk's cap (empty sections merge forward), else backward; a chunk under
   ``min_tokens`` merges with the next chunk of the same section when that fits, else with
   the previous chunk of the same section.
7. Sibling packing (when ``parents`` is given): consecutive chunks that each hold whole
   sections are packed into one chunk while it stays within ``target`` and every cap
   involved, as long as every section in it lies below the parent of its first section:
   sibling sections, and a section with its subsections, never a section with what follows
   its parent. A chunk under ``min_tokens`` made of subsections of the previous chunk's
   last section joins it up to the cap, not only the target: a section is not left
   without its small subsection.
"""

from __future__ import annotations

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
    filler: list[bool] | None = None  # says nothing alone (headings, link definitions)

    def empty(self, units: list[int]) -> bool:
        flags = self.filler or self.heading
        return all(flags[k] for k in units)


@dataclass(slots=True)
class Group:
    units: list[int]
    section: int
    overlap: int = 0  # leading units repeated from the previous group
    image: bool = False
    tokens: int = 0


@dataclass
class Packer:
    u: Units
    cap: dict[int, int]
    target: int
    min_tokens: int
    overlap: int
    parents: list[int | None] | None = None  # per section, for sibling packing
    groups: list[Group] = field(default_factory=list)
    whole: set[int] = field(default_factory=set)  # sections that fit in one chunk
    members: dict[int, list[int]] = field(default_factory=dict)  # non-image units by section
    runs: list[int] = field(default_factory=list)  # per unit: tokens up to the next heading

    def size(self, units: list[int]) -> int:
        tokens = self.u.tokens
        return sum([tokens[i] for i in units]) + SEP * max(len(units) - 1, 0)

    def run(self) -> list[Group]:
        cur: Group | None = None
        n = len(self.u.tokens)
        members, image, section, tokens = self.members, self.u.image, self.u.section, self.u.tokens
        sums: dict[int, int] = {}  # per section, the size of its non-image units together
        for i in range(n):
            if not image[i]:
                sec = section[i]
                if sec in members:
                    members[sec].append(i)
                    sums[sec] += tokens[i] + SEP
                else:
                    members[sec] = [i]
                    sums[sec] = tokens[i]
        self.whole = {s for s, total in sums.items() if total <= self.cap[s]}
        self.runs = self._runs()
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
        if self.parents is not None:
            self._pack_siblings()
        self.groups.sort(key=lambda g: g.units[g.overlap])
        for g in self.groups:
            g.tokens = 0 if g.image else self.size(g.units)
        return self.groups

    def _runs(self) -> list[int]:
        """Per unit, the tokens of the units after it up to the next heading or section (a
        heading's own blocks), each with its separator: one pass from the end."""
        u, n = self.u, len(self.u.tokens)
        runs, acc = [0] * n, 0
        for i in range(n - 1, -1, -1):
            runs[i] = acc
            same = i > 0 and u.section[i - 1] == u.section[i]
            acc = acc + u.tokens[i] + SEP if same and not u.heading[i] else 0
        return runs

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
            only_headings = all(u.heading[k] for k in self._own(cur))
            keeps_title = u.heading[cur.units[-1]] and u.atomic[i]
            if not ((only_headings or keeps_title) and total + cost <= cap):
                cur = self._close(cur, i)
        elif (
            has_own
            and u.heading[i]
            and total >= self.min_tokens
            and not all(u.heading[k] for k in self._own(cur))
        ):
            nxt = u.tokens[i + 1] + SEP if i + 1 < n and u.section[i + 1] == cur.section else 0
            own = cost + self.runs[i]  # the heading with its blocks, up to the next heading
            if total + cost + nxt > target or (total + own > target and own <= target):
                cur = self._close(cur, None)
        while cur.overlap and cur.tokens + SEP + u.tokens[i] > cap:
            first = cur.units.pop(0)
            cur.tokens -= u.tokens[first] + (SEP if cur.units else 0)
            cur.overlap -= 1
        self._append(cur, i)
        return cur

    def _append(self, cur: Group, i: int) -> None:
        cur.tokens += self.u.tokens[i] + (SEP if cur.units else 0)
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
        return new

    def _merge(self) -> None:
        """Rule 6: empty sections merge forward (else back); small chunks merge in-section."""
        text = [g for g in self.groups if not g.image]
        i = 0
        while i < len(text):
            g = text[i]
            empty = self.u.empty(self._own(g))
            if empty or g.tokens < self.min_tokens:  # g.tokens is size(g.units), kept so
                if i + 1 < len(text) and self._absorb(g, text[i + 1], empty, forward=True):
                    del text[i]
                    continue
                if i > 0 and self._absorb(g, text[i - 1], empty, forward=False):
                    del text[i]
                    i -= 1  # look at the grown chunk again
                    continue
            i += 1
        self.groups = text + [g for g in self.groups if g.image]

    def _absorb(self, g: Group, other: Group, any_section: bool, forward: bool) -> bool:
        """Move g's units into its neighbour ``other`` when allowed and within the cap."""
        if not (any_section or other.section == g.section):
            return False
        if forward:
            merged = g.units + self._own(other)  # other's overlap repeated g's tail: drop it
        else:
            merged = other.units + self._own(g)
        if self.size(merged) > self.cap[other.section]:
            return False
        other.units, other.tokens = merged, self.size(merged)
        if forward:
            other.overlap = g.overlap
        return True

    def _pack_siblings(self) -> None:
        """Rule 7: runs of whole sections under one parent share a chunk, up to the target."""
        text = sorted((g for g in self.groups if not g.image), key=lambda g: g.units[0])
        out: list[Group] = []
        held: list[list[int] | None] = []  # _sections of every group of out, kept
        for g in text:
            secs = self._sections(g)
            if out and self._siblings(out[-1], held[-1], g, secs):
                out[-1].units = out[-1].units + g.units
                held[-1] = sorted({*held[-1], *secs})  # whole sections joined: still whole
            else:
                out.append(g)
                held.append(secs)
        self.groups = out + [g for g in self.groups if g.image]

    def _siblings(self, a: Group, secs_a: list[int] | None, b: Group, secs_b) -> bool:
        if secs_a is None or secs_b is None:
            return False
        top = self.parents[secs_a[0]]  # the parent of the chunk's first section
        if top is None or not self._under(secs_b[0], top):
            return False
        caps = [self.cap[s] for s in secs_a + secs_b]
        limit = min([self.target] + caps)
        if self.size(b.units) < self.min_tokens and all(
            self._under(s, secs_a[-1]) for s in secs_b
        ):  # a small subsection of the chunk's last section stays with it, up to the cap
            limit = min(caps)
        return self.size(a.units + b.units) <= limit

    def _under(self, sec: int, top: int) -> bool:
        """True when section ``sec`` lies below section ``top`` (-1: the document root)."""
        p = self.parents[sec]
        while p is not None and p not in (top, -1):
            p = self.parents[p]
        return p == top

    def _sections(self, g: Group) -> list[int] | None:
        """The sections of g in order, when g holds every non-image unit of each; else None."""
        if g.overlap:
            return None
        section, image = self.u.section, self.u.image
        held = len({k for k in g.units if not image[k]})
        secs = sorted({section[k] for k in g.units})
        # g holds at most all the units of each of its sections, so it holds all of them
        # exactly when it holds as many (distinct) units as they have together
        if held == sum(len(self.members.get(s, ())) for s in secs):
            return secs
        return None


def pack(
    units: Units,
    cap: dict[int, int],
    target: int,
    min_tokens: int,
    overlap: int,
    parents: list[int | None] | None = None,
) -> list[Group]:
    n = len(units.tokens)
    if n and not any(units.image) and units.section.count(units.section[0]) == n:
        size = sum(units.tokens) + SEP * (n - 1)
        if size <= cap[units.section[0]]:  # one section within its cap: rule 1 decides alone
            return [Group(list(range(n)), units.section[0], tokens=size)]
    return Packer(units, cap, target, min_tokens, overlap, parents).run()
