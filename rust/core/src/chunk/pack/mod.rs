//! The packer: groups units into chunks. It sees only small integer arrays, never text.
//! It applies the packing rules as docs/design.md, "Packing rules", numbers them: rules 1
//! and 2 (sections, and a section that fits its cap kept whole), 3 (packing toward the
//! target; headings kept with what follows them), 5 (overlap) and 8 (an image its own
//! chunk) here; rule 6 in `merge`, rule 7 in `siblings`. Rule 4, cutting a block over its
//! budget, is `chunk::split`'s: the packer receives the pieces as units.
//!
//! - `merge`: rule 6, chunks of headings only and chunks under `min_tokens` merged.
//! - `siblings`: rule 7, consecutive chunks of whole sections packed together.
//! - `tests`: the rules, each on small integer arrays.

mod merge;
mod siblings;

/// Tokens charged for the blank line between two units.
pub const SEP: i64 = 1;

/// The units of one document, one entry per unit in every array.
pub struct Units<'a> {
    pub tokens: &'a [i64],
    pub section: &'a [usize],
    pub heading: &'a [bool],
    pub atomic: &'a [bool],
    pub image: &'a [bool],
    /// May be repeated at the start of the next chunk (no heading, front matter or image).
    pub overlap_ok: &'a [bool],
    /// Says nothing alone (headings, link reference definitions, comments).
    pub filler: &'a [bool],
}

/// Owned unit arrays, one entry per unit in each (what `Units` views).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitArrays {
    pub tokens: Vec<i64>,
    pub section: Vec<usize>,
    pub heading: Vec<bool>,
    pub atomic: Vec<bool>,
    pub image: Vec<bool>,
    pub overlap_ok: Vec<bool>,
    pub filler: Vec<bool>,
}

impl UnitArrays {
    pub fn units(&self) -> Units<'_> {
        Units {
            tokens: &self.tokens,
            section: &self.section,
            heading: &self.heading,
            atomic: &self.atomic,
            image: &self.image,
            overlap_ok: &self.overlap_ok,
            filler: &self.filler,
        }
    }
}

/// The sizes the packer works to; `cap` is per section.
pub struct Limits<'a> {
    pub cap: &'a [i64],
    pub target: i64,
    pub min_tokens: i64,
    pub overlap: i64,
}

/// Where a section's heading sits: at the top of the document or below another section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    Root,
    Section(usize),
}

/// One chunk: its units (indices, in order), the section it starts in, how many leading
/// units repeat the previous chunk's tail, whether it is an image, and its size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    pub units: Vec<usize>,
    pub section: usize,
    pub overlap: usize,
    pub image: bool,
    pub tokens: i64,
}

impl Group {
    fn new(section: usize) -> Self {
        Group {
            section,
            ..Group::default()
        }
    }

    /// The units the chunk owns (after its overlap).
    fn own(&self) -> &[usize] {
        &self.units[self.overlap..]
    }
}

/// Why the arrays cannot be packed: lengths that differ or indices out of range.
pub fn check(u: &Units, lim: &Limits, parents: Option<&[Option<Parent>]>) -> Result<(), String> {
    let n = u.tokens.len();
    let lens = [
        u.section.len(),
        u.heading.len(),
        u.atomic.len(),
        u.image.len(),
        u.overlap_ok.len(),
        u.filler.len(),
    ];
    if lens.iter().any(|&l| l != n) {
        return Err("the unit arrays differ in length".into());
    }
    if u.section.iter().any(|&s| s >= lim.cap.len()) {
        return Err("a unit's section has no cap".into());
    }
    if let Some(p) = parents {
        let outside = |s: &usize| *s >= p.len();
        let bad_parent = p
            .iter()
            .any(|q| matches!(q, Some(Parent::Section(s)) if outside(s)));
        if u.section.iter().any(outside) || bad_parent {
            return Err("a section has no parent entry".into());
        }
    }
    Ok(())
}

/// The chunks of the units (see `check` for what the arrays must satisfy): one section
/// without images that fits its cap is one chunk at once (rule 2 decides alone), else the
/// full packer's.
pub fn pack(u: &Units, lim: &Limits, parents: Option<&[Option<Parent>]>) -> Vec<Group> {
    let n = u.tokens.len();
    if n > 0 && !u.image.contains(&true) && u.section.iter().all(|&s| s == u.section[0]) {
        let all: Vec<usize> = (0..n).collect();
        let tokens = size(u.tokens, &all);
        if tokens <= lim.cap[u.section[0]] {
            return vec![Group {
                units: all,
                tokens,
                ..Group::new(u.section[0])
            }];
        }
    }
    pack_full(u, lim, parents)
}

/// The chunks of the units by every rule, sorted by their first own unit (stable).
pub fn pack_full(u: &Units, lim: &Limits, parents: Option<&[Option<Parent>]>) -> Vec<Group> {
    let mut p = Packer::new(u, lim);
    p.place_all();
    p.groups = merge::merge(std::mem::take(&mut p.groups), u, lim);
    if let Some(parents) = parents {
        let members = p.members;
        p.groups =
            siblings::pack_siblings(std::mem::take(&mut p.groups), u, lim, parents, &members);
    }
    let mut groups = p.groups;
    groups.sort_by_key(|g| g.units[g.overlap]);
    for g in &mut groups {
        g.tokens = if g.image { 0 } else { size(u.tokens, &g.units) };
    }
    groups
}

/// The size of units joined: their tokens and a separator between each two.
fn size(tokens: &[i64], units: &[usize]) -> i64 {
    let sum: i64 = units.iter().map(|&k| tokens[k]).sum();
    sum + SEP * (units.len() as i64 - 1).max(0)
}

/// Rules 1, 2, 3, 5 and 8: the units placed into chunks in order.
struct Packer<'a> {
    u: &'a Units<'a>,
    lim: &'a Limits<'a>,
    groups: Vec<Group>,
    /// Per section: its non-image units fit its cap together.
    whole: Vec<bool>,
    /// Per section: how many non-image units it has.
    members: Vec<usize>,
    /// Per unit: the tokens of the units after it up to the next heading.
    runs: Vec<i64>,
}

impl<'a> Packer<'a> {
    fn new(u: &'a Units<'a>, lim: &'a Limits<'a>) -> Self {
        let sections = lim.cap.len();
        let (mut members, mut sums) = (vec![0usize; sections], vec![0i64; sections]);
        for (i, &sec) in u.section.iter().enumerate() {
            if !u.image[i] {
                sums[sec] += u.tokens[i] + if members[sec] > 0 { SEP } else { 0 };
                members[sec] += 1;
            }
        }
        let whole = (0..sections)
            .map(|s| members[s] > 0 && sums[s] <= lim.cap[s])
            .collect();
        Packer {
            u,
            lim,
            groups: Vec::new(),
            whole,
            members,
            runs: runs(u),
        }
    }

    fn place_all(&mut self) {
        let mut cur: Option<Group> = None;
        for i in 0..self.u.tokens.len() {
            let sec = self.u.section[i];
            if self.u.image[i] {
                self.groups.push(Group {
                    units: vec![i],
                    image: true,
                    ..Group::new(sec)
                });
                continue;
            }
            let open = match cur.take() {
                Some(g) if g.section == sec => g,
                Some(g) => {
                    self.close(g, None);
                    Group::new(sec)
                }
                None => Group::new(sec),
            };
            cur = Some(self.place(open, i));
        }
        if let Some(g) = cur {
            self.close(g, None);
        }
    }

    /// Unit `i` added to `cur`, or to the chunk that follows it when rule 3 closes it.
    fn place(&mut self, mut cur: Group, i: usize) -> Group {
        let (u, cap) = (self.u, self.lim.cap[cur.section]);
        if self.whole[cur.section] {
            append(&mut cur, u.tokens, i);
            return cur;
        }
        let (has_own, total) = (cur.units.len() > cur.overlap, cur.tokens);
        let cost = u.tokens[i] + if cur.units.is_empty() { 0 } else { SEP };
        let target = self.lim.target.min(cap);
        let only_headings = |g: &Group| g.own().iter().all(|&k| u.heading[k]);
        if has_own && total + cost > target {
            let keeps_title = u.heading[*cur.units.last().unwrap()] && u.atomic[i];
            if !((only_headings(&cur) || keeps_title) && total + cost <= cap) {
                cur = self.close(cur, Some(i));
            }
        } else if has_own
            && u.heading[i]
            && total >= self.lim.min_tokens
            && !only_headings(&cur)
            && self.heading_opens(&cur, i, total + cost, cost, target)
        {
            cur = self.close(cur, None);
        }
        while cur.overlap > 0 && cur.tokens + SEP + u.tokens[i] > cap {
            let first = cur.units.remove(0);
            cur.tokens -= u.tokens[first] + if cur.units.is_empty() { 0 } else { SEP };
            cur.overlap -= 1;
        }
        append(&mut cur, u.tokens, i);
        cur
    }

    /// Rule 3: heading `i` starts a new chunk (`with` is the chunk's size with it).
    fn heading_opens(&self, cur: &Group, i: usize, with: i64, cost: i64, target: i64) -> bool {
        let u = self.u;
        let same = i + 1 < u.tokens.len() && u.section[i + 1] == cur.section;
        let next = if same { u.tokens[i + 1] + SEP } else { 0 };
        let own = cost + self.runs[i]; // the heading with its blocks, up to the next heading
        with + next > target || (cur.tokens + own > target && own <= target)
    }

    /// Keeps `cur` when it owns units; the next chunk of its section starts with the overlap
    /// (rule 5) when `cur` closes for size before unit `next`.
    fn close(&mut self, cur: Group, next: Option<usize>) -> Group {
        let mut new = Group::new(cur.section);
        if next.is_some() && self.lim.overlap != 0 {
            new.units = self.overlap_suffix(cur.own());
            new.overlap = new.units.len();
            new.tokens = size(self.u.tokens, &new.units);
        }
        if !cur.own().is_empty() {
            self.groups.push(cur);
        }
        new
    }

    /// The largest suffix of `own` past its first unit that fits the overlap, of units that
    /// may be repeated.
    fn overlap_suffix(&self, own: &[usize]) -> Vec<usize> {
        let u = self.u;
        let (mut acc, mut from) = (0, own.len());
        for (j, &k) in own.iter().enumerate().skip(1).rev() {
            if !u.overlap_ok[k] || acc + u.tokens[k] + SEP > self.lim.overlap {
                break;
            }
            acc += u.tokens[k] + SEP;
            from = j;
        }
        own[from..].to_vec()
    }
}

fn append(cur: &mut Group, tokens: &[i64], i: usize) {
    cur.tokens += tokens[i] + if cur.units.is_empty() { 0 } else { SEP };
    cur.units.push(i);
}

/// Per unit, the tokens of the units after it up to the next heading or section (a
/// heading's own blocks), each with its separator: one pass from the end.
fn runs(u: &Units) -> Vec<i64> {
    let n = u.tokens.len();
    let (mut runs, mut acc) = (vec![0; n], 0);
    for i in (0..n).rev() {
        runs[i] = acc;
        let same = i > 0 && u.section[i - 1] == u.section[i];
        acc = if same && !u.heading[i] {
            acc + u.tokens[i] + SEP
        } else {
            0
        };
    }
    runs
}

#[cfg(test)]
mod tests;
