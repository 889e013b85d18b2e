//! Where a word longer than the budget may be cut: between extended grapheme clusters as
//! Python's reference (`regex`'s `\X`) finds them, or between code points. Offsets are byte
//! offsets into the block text.

use unicode_segmentation::UnicodeSegmentation;

use super::text::char_at;
use crate::tables::incb::{CONSONANT, EXTEND, LINKER};

/// Offsets s, ..., e of the extended grapheme cluster boundaries of text[s..e], as the
/// `regex` module's `\X` finds them (Python's reference): the clusters of UAX #29, but a
/// conjunct is kept whole after any linker (`joins_conjunct`). The tables of
/// unicode-segmentation are of Unicode 17 and `regex`'s of Unicode 18: clusters differ
/// only around code points first assigned in Unicode 18.
pub fn graphemes(text: &str, s: usize, e: usize) -> Vec<usize> {
    let slice = &text[s..e];
    let mut out = vec![s];
    out.extend(
        slice
            .grapheme_indices(true)
            .skip(1)
            .filter(|&(i, _)| !joins_conjunct(slice, i))
            .map(|(i, _)| s + i),
    );
    if e > s {
        out.push(e);
    }
    out
}

fn within(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    let i = table.partition_point(|&(_, hi)| hi < cp);
    i < table.len() && table[i].0 <= cp
}

/// Is there no cluster boundary at `i` for `regex`: a consonant after a linker (virama),
/// with only linkers and extending marks between them (InCB=Consonant, Linker, Extend)?
/// UAX #29 (GB9c) also asks for a consonant before the linker; `regex` does not.
fn joins_conjunct(slice: &str, i: usize) -> bool {
    if !within(CONSONANT, char_at(slice, i)) {
        return false;
    }
    for c in slice[..i].chars().rev() {
        if within(LINKER, c) {
            return true;
        }
        if !within(EXTEND, c) {
            return false;
        }
    }
    false
}

/// Code-point boundaries s, ..., e of text[s..e].
pub fn code_points(text: &str, s: usize, e: usize) -> Vec<usize> {
    let mut out: Vec<usize> = text[s..e].char_indices().map(|(i, _)| s + i).collect();
    out.push(e);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grapheme_and_code_point_bounds() {
        let text = "e\u{301}\u{1f468}\u{200d}\u{1f469}x";
        assert_eq!(graphemes(text, 0, text.len()), vec![0, 3, 14, 15]);
        assert_eq!(graphemes(text, 3, 3), vec![3]);
        // a conjunct stays whole after a virama, even with no consonant before it
        let text = "\u{915}\u{94d}\u{937} a\u{94d}\u{301}\u{915}";
        assert_eq!(graphemes(text, 0, text.len()), vec![0, 9, 10, 19]);
        assert_eq!(graphemes(text, 3, 9), vec![3, 9]);
        assert_eq!(code_points("aé", 0, 3), vec![0, 1, 3]);
    }
}
