//! Rule 6, after packing: a chunk of headings only (or of headings and filler) merges
//! forward into the next chunk when that fits the next chunk's cap (empty sections merge
//! forward), else backward; a chunk under `min_tokens` merges with the next chunk of the
//! same section when that fits, else with the previous one. A chunk that grew is looked at
//! again.

use super::{size, Group, Limits, Units};

/// The chunks after merging: the text chunks in their order, then the images.
pub(super) fn merge(groups: Vec<Group>, u: &Units, lim: &Limits) -> Vec<Group> {
    let (mut text, images): (Vec<Group>, Vec<Group>) = groups.into_iter().partition(|g| !g.image);
    let mut i = 0;
    while i < text.len() {
        let g = &text[i];
        let empty = g.own().iter().all(|&k| u.filler[k]);
        if empty || g.tokens < lim.min_tokens {
            if i + 1 < text.len() && absorb(&mut text, i, i + 1, empty, u, lim) {
                text.remove(i);
                continue;
            }
            if i > 0 && absorb(&mut text, i, i - 1, empty, u, lim) {
                text.remove(i);
                i -= 1;
                continue;
            }
        }
        i += 1;
    }
    text.extend(images);
    text
}

/// Moves chunk `g`'s units into its neighbour `other` when allowed (the same section, or
/// `any_section`) and within the neighbour's cap. Merging forward drops the neighbour's
/// overlap (it repeated g's tail); merging back drops g's.
fn absorb(
    text: &mut [Group],
    g: usize,
    other: usize,
    any_section: bool,
    u: &Units,
    lim: &Limits,
) -> bool {
    let forward = other > g;
    let (g, other) = if forward {
        let (a, b) = text.split_at_mut(other);
        (&a[g], &mut b[0])
    } else {
        let (a, b) = text.split_at_mut(g);
        (&b[0], &mut a[other])
    };
    if !(any_section || other.section == g.section) {
        return false;
    }
    let merged: Vec<usize> = if forward {
        g.units.iter().chain(other.own()).copied().collect()
    } else {
        other.units.iter().chain(g.own()).copied().collect()
    };
    let tokens = size(u.tokens, &merged);
    if tokens > lim.cap[other.section] {
        return false;
    }
    other.units = merged;
    other.tokens = tokens;
    if forward {
        other.overlap = g.overlap;
    }
    true
}
