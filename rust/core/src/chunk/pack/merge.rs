//! Rule 6, after packing: a chunk of headings only (or of headings and filler) merges
//! forward into the next chunk when that fits the next chunk's cap (empty sections merge
//! forward), else backward; a chunk under `min_tokens` merges with the next chunk of the
//! same section when that fits, else with the previous one. A chunk that grew is looked at
//! again.
//!
//! In time linear in the units: the chunks are a linked list (a merged chunk leaves it
//! without moving the others), a chunk's size and whether it is filler only are kept up
//! to date as it grows, and a chunk merging forward hands its units over rather than
//! copying them (200,000 empty headings in a row merge into one chunk).

use super::{size, Group, Limits, Units, SEP};

/// What rule 6 asks of a chunk, kept as it grows: whether its own units (its overlap left
/// out) are all filler, their tokens joined, and how many there are.
#[derive(Clone, Copy)]
struct Own {
    filler: bool,
    tokens: i64,
    units: usize,
}

impl Own {
    fn of(g: &Group, u: &Units) -> Own {
        let own = g.own();
        Own {
            filler: own.iter().all(|&k| u.filler[k]),
            tokens: size(u.tokens, own),
            units: own.len(),
        }
    }

    /// The own units of `self` followed by those of `then`.
    fn then(self, then: Own) -> Own {
        Own {
            filler: self.filler && then.filler,
            tokens: joined(self.tokens, self.units, then.tokens, then.units),
            units: self.units + then.units,
        }
    }
}

/// The size of two lists of units joined, from their sizes and lengths (as `size` counts).
fn joined(a: i64, a_units: usize, b: i64, b_units: usize) -> i64 {
    a + b + if a_units > 0 && b_units > 0 { SEP } else { 0 }
}

const NONE: usize = usize::MAX;

/// The chunks after merging: the text chunks in their order, then the images.
pub(super) fn merge(groups: Vec<Group>, u: &Units, lim: &Limits) -> Vec<Group> {
    let (text, images): (Vec<Group>, Vec<Group>) = groups.into_iter().partition(|g| !g.image);
    let n = text.len();
    let mut own: Vec<Own> = text.iter().map(|g| Own::of(g, u)).collect();
    let mut slots: Vec<Option<Group>> = text.into_iter().map(Some).collect();
    let mut next: Vec<usize> = (1..=n).map(|j| if j < n { j } else { NONE }).collect();
    let mut prev: Vec<usize> = (0..n).map(|j| j.checked_sub(1).unwrap_or(NONE)).collect();
    let mut i = if n > 0 { 0 } else { NONE };
    while i != NONE {
        let g = slots[i].as_ref().expect("a chunk in the list");
        let empty = own[i].filler;
        if empty || g.tokens < lim.min_tokens {
            let (after, before) = (next[i], prev[i]);
            let moved = (after != NONE && absorb(&mut slots, &mut own, i, after, empty, u, lim))
                .then_some(after)
                .or_else(|| {
                    (before != NONE && absorb(&mut slots, &mut own, i, before, empty, u, lim))
                        .then_some(before)
                });
            if let Some(into) = moved {
                if before != NONE {
                    next[before] = after;
                }
                if after != NONE {
                    prev[after] = before;
                }
                i = into;
                continue;
            }
        }
        i = next[i];
    }
    let mut out: Vec<Group> = slots.into_iter().flatten().collect();
    out.extend(images);
    out
}

/// Moves chunk `g`'s units into its neighbour `other` when allowed (the same section, or
/// `any_section`) and within the neighbour's cap; `g`'s slot is emptied then. Merging
/// forward drops the neighbour's overlap (it repeated g's tail); merging back drops g's.
fn absorb(
    slots: &mut [Option<Group>],
    own: &mut [Own],
    g: usize,
    other: usize,
    any_section: bool,
    u: &Units,
    lim: &Limits,
) -> bool {
    let forward = other > g;
    let (from, to) = (slots[g].as_ref().unwrap(), slots[other].as_ref().unwrap());
    if !(any_section || to.section == from.section) {
        return false;
    }
    let tokens = if forward {
        joined(
            from.tokens,
            from.units.len(),
            own[other].tokens,
            own[other].units,
        )
    } else {
        joined(to.tokens, to.units.len(), own[g].tokens, own[g].units)
    };
    if tokens > lim.cap[to.section] {
        return false;
    }
    let from = slots[g].take().unwrap();
    let to = slots[other].as_mut().unwrap();
    if forward {
        let mut units = from.units;
        units.extend_from_slice(to.own());
        to.units = units;
        to.overlap = from.overlap;
        own[other] = own[g].then(own[other]);
    } else {
        to.units.extend_from_slice(&from.units[from.overlap..]);
        own[other] = own[other].then(own[g]);
    }
    to.tokens = tokens;
    debug_assert_eq!(to.tokens, size(u.tokens, &to.units));
    true
}
