//! Fine pieces: a span cut by lines, then sentences, then runs of words, then characters,
//! only where a piece is still over the budget; and consecutive pieces grouped under a
//! limit. Every count goes through the `Counter` in the batches listed on each function
//! (a real tokenizer's counts of joined text are not additive).

use std::borrow::Cow;
use std::ops::Range;

use super::graphemes::{code_points, graphemes};
use super::text::{gap, lines, sentences, trim, words, Span};
use crate::tokens::counter::Counter;

/// How a piece over the budget is cut next (characters come last, always).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Line,
    Sentence,
    Word,
}

/// A piece: its byte range and its tokens.
pub type Counted = (usize, usize, i64);

/// Words of a piece are read and counted this many at a time.
const WORD_BATCH: usize = 4096;

fn count_spans<C: Counter>(
    text: &str,
    spans: &[Span],
    count: &mut C,
) -> Result<Vec<i64>, C::Error> {
    let texts: Vec<&str> = spans.iter().map(|&(a, b)| &text[a..b]).collect();
    count.count(&texts)
}

/// (start, end, tokens) pieces of text[s..e], in order. Cuts are decided on the pieces
/// themselves (each within budget, counted in one batch per level); the tokens returned
/// also count the whitespace before each piece (indentation, blank lines), which is in the
/// text once pieces are joined (`gap` with `limit`), counted in one last batch.
pub fn fine_spans<C: Counter>(
    text: &str,
    s: usize,
    e: usize,
    levels: &[Level],
    budget: i64,
    count: &mut C,
    limit: usize,
) -> Result<Vec<Counted>, C::Error> {
    let Some(first) = trim(text, s, e) else {
        return Ok(Vec::new());
    };
    let mut pending = vec![first];
    let mut counts = count_spans(text, &pending, count)?;
    for level in levels.iter().map(Some).chain([None]) {
        if counts.iter().all(|&c| c <= budget) {
            break;
        }
        let mut next = Vec::with_capacity(pending.len());
        for (&(a, b), &c) in pending.iter().zip(&counts) {
            let parts = if c <= budget {
                Vec::new()
            } else {
                match level {
                    Some(Level::Line) => lines(text, a, b),
                    Some(Level::Sentence) => sentences(text, a, b),
                    Some(Level::Word) => runs(text, a, b, budget, count)?,
                    None => chars(text, a, b, budget, count)?,
                }
            };
            if parts.is_empty() {
                next.push((a, b)); // within budget, or a level that finds no cut
            } else {
                next.extend(parts);
            }
        }
        pending = next;
        counts = count_spans(text, &pending, count)?;
    }
    let joined: Vec<Cow<str>> = pending
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            let before = if i == 0 { s } else { pending[i - 1].1 };
            with_gap(text, before, a, b, limit)
        })
        .collect();
    let texts: Vec<&str> = joined.iter().map(|t| t.as_ref()).collect();
    let counts = count.count(&texts)?;
    Ok(pending
        .iter()
        .zip(counts)
        .map(|(&(a, b), n)| (a, b, n))
        .collect())
}

/// `gap(text, before, a) + text[a..b]`: a slice of the text when the gap is verbatim.
fn with_gap(text: &str, before: usize, a: usize, b: usize, limit: usize) -> Cow<'_, str> {
    let g = gap(text, before, a, limit);
    if g.len() == a - before {
        Cow::Borrowed(&text[before..b]) // a shortened gap has fewer bytes
    } else {
        Cow::Owned(format!("{g}{}", &text[a..b]))
    }
}

/// The words of text[a..b] joined into runs of about a sixteenth of the budget: a line of
/// a million words would otherwise become a million pieces for the packer. Runs stay small
/// enough to be overlap; a word over the budget stays alone (the character level cuts it).
/// Words are read and counted `WORD_BATCH` at a time, so memory follows the runs.
pub fn runs<C: Counter>(
    text: &str,
    a: usize,
    b: usize,
    budget: i64,
    count: &mut C,
) -> Result<Vec<Span>, C::Error> {
    let limit = budget.div_euclid(16).max(1);
    let mut out: Vec<Span> = Vec::new();
    let mut size = 0;
    let mut all = words(text, a, b);
    loop {
        let batch: Vec<Span> = all.by_ref().take(WORD_BATCH).collect();
        if batch.is_empty() {
            return Ok(out);
        }
        for (&(x, y), n) in batch.iter().zip(count_spans(text, &batch, count)?) {
            match out.last_mut() {
                Some(last) if size + n < limit && n <= budget => {
                    last.1 = y;
                    size += n + 1;
                }
                _ => {
                    out.push((x, y));
                    size = n;
                }
            }
        }
    }
}

/// Last resort: cut between characters, each piece as long as fits, and only between
/// grapheme clusters: never inside a base letter and its marks, a Hangul syllable spelled
/// in jamo, or an emoji sequence. A single cluster over the budget (a letter with a million
/// combining marks) is cut between code points, so nothing is rejected.
pub fn chars<C: Counter>(
    text: &str,
    a: usize,
    b: usize,
    budget: i64,
    count: &mut C,
) -> Result<Vec<Span>, C::Error> {
    let bounds = graphemes(text, a, b);
    let fits = budget.max(1);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < bounds.len() {
        let lo = longest(text, &bounds, i, fits, count)?;
        if lo == i + 1 && count.count_one(&text[bounds[i]..bounds[lo]])? > fits {
            let points = code_points(text, bounds[i], bounds[lo]);
            let mut k = 0;
            while k + 1 < points.len() {
                let end = longest(text, &points, k, fits, count)?;
                out.push((points[k], points[end]));
                k = end;
            }
        } else {
            out.push((bounds[i], bounds[lo]));
        }
        i = lo;
    }
    Ok(out)
}

/// The largest index `lo` > i of `bounds` whose text[bounds[i]..bounds[lo]] fits (or
/// i + 1): found by doubling from a window of 8 tokens' worth of bounds, then bisection,
/// so a piece costs about its own length (bisecting over the rest of a 30 MB word would
/// be quadratic). One count per text tried.
fn longest<C: Counter>(
    text: &str,
    bounds: &[usize],
    i: usize,
    fits: i64,
    count: &mut C,
) -> Result<usize, C::Error> {
    let last = bounds.len() - 1;
    let window = usize::try_from(fits)
        .unwrap_or(usize::MAX)
        .saturating_mul(8);
    let (mut lo, mut hi) = (i + 1, last.min(i.saturating_add(window)));
    while hi < last && count.count_one(&text[bounds[i]..bounds[hi]])? <= fits {
        lo = hi;
        hi = last.min(i + (hi - i) * 2);
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if count.count_one(&text[bounds[i]..bounds[mid]])? <= fits {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(lo)
}

/// Consecutive pieces grouped greedily so each group's token sum (plus one per join)
/// stays within `limit`: index ranges into `pieces`.
pub fn group(pieces: &[Counted], limit: i64) -> Vec<Range<usize>> {
    let mut groups: Vec<Range<usize>> = Vec::new();
    let mut total = 0;
    for (i, &(_, _, n)) in pieces.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if total + n < limit => {
                g.end = i + 1;
                total += n + 1;
            }
            _ => {
                groups.push(i..i + 1);
                total = n;
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::counter::CodePoints;

    /// Records every batch it counts.
    struct Recorder(Vec<Vec<String>>);

    impl Counter for Recorder {
        type Error = std::convert::Infallible;
        fn count(&mut self, texts: &[&str]) -> Result<Vec<i64>, Self::Error> {
            self.0.push(texts.iter().map(|t| t.to_string()).collect());
            Ok(texts.iter().map(|t| t.chars().count() as i64).collect())
        }
    }

    #[test]
    fn pieces_are_cut_only_as_far_as_needed_and_count_their_gap() {
        let text = "one two.\n  three four five six seven.";
        let got = fine_spans(text, 0, text.len(), &[Level::Line], 20, &mut CodePoints, 16).unwrap();
        let pieces: Vec<(&str, i64)> = got.iter().map(|&(a, b, n)| (&text[a..b], n)).collect();
        assert_eq!(pieces[0], ("one two.", 8));
        // the indentation before a piece is counted with it
        assert!(pieces[1..].iter().all(|&(p, n)| n >= p.len() as i64));
        assert!(got.iter().all(|&(a, b, _)| b - a <= 20));
    }

    #[test]
    fn counts_are_batched_per_level() {
        let text = "aaaa bbbb. cccc dddd.";
        let mut rec = Recorder(Vec::new());
        fine_spans(
            text,
            0,
            text.len(),
            &[Level::Sentence, Level::Word],
            12,
            &mut rec,
            16,
        )
        .unwrap();
        assert_eq!(rec.0[0], vec![text]);
        assert_eq!(rec.0[1], vec!["aaaa bbbb.", "cccc dddd."]);
        assert_eq!(rec.0.last().unwrap(), &vec!["aaaa bbbb.", " cccc dddd."]);
    }

    #[test]
    fn runs_join_words_up_to_a_sixteenth_of_the_budget() {
        let text = "a b c d e f";
        assert_eq!(
            runs(text, 0, text.len(), 64, &mut CodePoints).unwrap(),
            vec![(0, 3), (4, 7), (8, 11)]
        );
        assert_eq!(
            runs(text, 0, text.len(), 1, &mut CodePoints).unwrap().len(),
            6
        );
    }

    #[test]
    fn character_cuts_keep_clusters_unless_one_alone_is_too_long() {
        let text = "e\u{301}e\u{301}e\u{301}";
        let got = chars(text, 0, text.len(), 3, &mut CodePoints).unwrap();
        assert_eq!(got, vec![(0, 3), (3, 6), (6, 9)]);
        let text = format!("a{}", "\u{301}".repeat(5));
        let got = chars(&text, 0, text.len(), 2, &mut CodePoints).unwrap();
        let lens: Vec<usize> = got
            .iter()
            .map(|&(a, b)| text[a..b].chars().count())
            .collect();
        assert_eq!(lens, vec![2, 2, 2]);
    }

    #[test]
    fn groups_stay_within_the_limit() {
        let pieces = [(0, 1, 3), (2, 3, 3), (4, 5, 3), (6, 7, 10)];
        assert_eq!(group(&pieces, 7), vec![0..2, 2..3, 3..4]);
    }
}
