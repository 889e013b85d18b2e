//! Rule 7, sibling packing: consecutive chunks that each hold whole sections are packed
//! into one chunk while it stays within the target and every cap involved, as long as
//! every section in it lies below the parent of its first section. A chunk under
//! `min_tokens` made of subsections of the previous chunk's last section joins it up to
//! the cap, not only the target.

use super::{size, Group, Limits, Parent, Units, SEP};

struct Family<'a> {
    u: &'a Units<'a>,
    lim: &'a Limits<'a>,
    parents: &'a [Option<Parent>],
    /// Per section: how many non-image units it has.
    members: &'a [usize],
}

/// The chunks after sibling packing: the text chunks by first unit (stable), then images.
pub(super) fn pack_siblings(
    groups: Vec<Group>,
    u: &Units,
    lim: &Limits,
    parents: &[Option<Parent>],
    members: &[usize],
) -> Vec<Group> {
    let f = Family {
        u,
        lim,
        parents,
        members,
    };
    let (mut text, images): (Vec<Group>, Vec<Group>) = groups.into_iter().partition(|g| !g.image);
    text.sort_by_key(|g| g.units[0]);
    // each chunk of `out` with its sections, while it holds them whole
    let mut out: Vec<(Group, Option<Vec<usize>>)> = Vec::with_capacity(text.len());
    for g in text {
        let secs = f.sections(&g);
        if let Some((a, held)) = out.last_mut() {
            if f.siblings(a, held.as_deref(), &g, secs.as_deref()) {
                a.units.extend_from_slice(&g.units);
                let joined = held.as_mut().unwrap(); // whole sections joined: still whole
                joined.extend(secs.unwrap());
                joined.sort_unstable();
                joined.dedup();
                continue;
            }
        }
        out.push((g, secs));
    }
    out.into_iter().map(|(g, _)| g).chain(images).collect()
}

impl Family<'_> {
    /// Whether chunk `b` (of sections `secs_b`) joins chunk `a` (of sections `secs_a`).
    fn siblings(
        &self,
        a: &Group,
        secs_a: Option<&[usize]>,
        b: &Group,
        secs_b: Option<&[usize]>,
    ) -> bool {
        let (Some(secs_a), Some(secs_b)) = (secs_a, secs_b) else {
            return false;
        };
        // the parent of the chunk's first section
        let Some(top) = self.parents[secs_a[0]] else {
            return false;
        };
        if !self.under(secs_b[0], top) {
            return false;
        }
        let caps = secs_a
            .iter()
            .chain(secs_b)
            .map(|&s| self.lim.cap[s])
            .min()
            .unwrap();
        let mut limit = self.lim.target.min(caps);
        let last = Parent::Section(*secs_a.last().unwrap());
        if size(self.u.tokens, &b.units) < self.lim.min_tokens
            && secs_b.iter().all(|&s| self.under(s, last))
        {
            limit = caps; // a small subsection of the chunk's last section stays with it
        }
        let joined = size(self.u.tokens, &a.units) + size(self.u.tokens, &b.units) + SEP;
        joined <= limit
    }

    /// Whether section `sec` lies below `top`. A cycle of parents (which the sections of a
    /// document never make) reads as not below.
    fn under(&self, sec: usize, top: Parent) -> bool {
        let mut p = self.parents[sec];
        for _ in 0..=self.parents.len() {
            match p {
                Some(Parent::Section(s)) if Parent::Section(s) != top => p = self.parents[s],
                _ => return p == Some(top),
            }
        }
        false
    }

    /// The sections of `g` in order, when it holds every non-image unit of each; else None.
    fn sections(&self, g: &Group) -> Option<Vec<usize>> {
        if g.overlap > 0 {
            return None;
        }
        let mut held: Vec<usize> = g
            .units
            .iter()
            .copied()
            .filter(|&k| !self.u.image[k])
            .collect();
        held.sort_unstable();
        held.dedup();
        let mut secs: Vec<usize> = g.units.iter().map(|&k| self.u.section[k]).collect();
        secs.sort_unstable();
        secs.dedup();
        // g holds at most all the units of each of its sections, so it holds all of them
        // exactly when it holds as many (distinct) units as they have together
        let all: usize = secs.iter().map(|&s| self.members[s]).sum();
        (held.len() == all).then_some(secs)
    }
}
