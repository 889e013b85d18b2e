//! Where text may be cut: trimmed spans, lines, sentences, words, and the whitespace
//! between pieces. Offsets are byte offsets into the block text; whitespace is Python's
//! (`str.isspace`, `re`'s `\s`), lines end at "\r\n", "\r" or "\n" only.

use std::borrow::Cow;

use crate::pyunicode::is_space;

/// A byte range of the block text.
pub type Span = (usize, usize);

pub(super) fn char_at(text: &str, i: usize) -> char {
    text[i..].chars().next().expect("a character at a boundary")
}

fn char_before(text: &str, i: usize) -> char {
    text[..i]
        .chars()
        .next_back()
        .expect("a character before a boundary")
}

/// text[s..e] without Python whitespace at either end; None when nothing is left.
pub fn trim(text: &str, mut s: usize, mut e: usize) -> Option<Span> {
    while s < e && is_space(char_at(text, s)) {
        s += char_at(text, s).len_utf8();
    }
    while e > s && is_space(char_before(text, e)) {
        e -= char_before(text, e).len_utf8();
    }
    (s < e).then_some((s, e))
}

/// text[s..e] cut at `ends` (in order, inside the range), each part trimmed, empty parts
/// dropped.
pub fn cut(text: &str, s: usize, e: usize, ends: &[usize]) -> Vec<Span> {
    let mut prev = s;
    let mut out = Vec::new();
    for &pos in ends.iter().chain([e].iter()) {
        out.extend(trim(text, prev, pos));
        prev = pos;
    }
    out
}

/// Offsets right after every line ending ("\r\n", "\r", "\n") in text[s..e].
pub fn line_ends(text: &str, s: usize, e: usize) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = s;
    while i < e {
        match b[i] {
            b'\n' => out.push(i + 1),
            b'\r' if i + 1 < e && b[i + 1] == b'\n' => {
                i += 1;
                out.push(i + 1);
            }
            b'\r' => out.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    out
}

/// The lines of text[s..e], trimmed, blank ones dropped.
pub fn lines(text: &str, s: usize, e: usize) -> Vec<Span> {
    cut(text, s, e, &line_ends(text, s, e))
}

/// Latin-style sentence ends: they end a sentence only before whitespace ("v1.2" and
/// "example.com" stay whole).
fn is_latin_end(c: char) -> bool {
    matches!(
        c,
        '.' | '!' | '?' | '\u{2026}' | '\u{203c}' | '\u{2047}'..='\u{2049}'
    )
}

/// Marks that never stand inside a sentence and end one wherever they stand, as the
/// scripts that use them put no space after them: ideographic and full-width stops and
/// marks (。｡．！？), Devanagari danda and double danda (। ॥), Arabic question mark and Urdu
/// full stop (؟ ۔), Armenian full stop (։), Ethiopic full stop and question mark (። ፧),
/// Myanmar section mark (။), Khmer khan (។ ៕).
fn is_script_end(c: char) -> bool {
    matches!(
        c,
        '\u{3002}'
            | '\u{ff61}'
            | '\u{ff0e}'
            | '\u{ff01}'
            | '\u{ff1f}'
            | '\u{0964}'
            | '\u{0965}'
            | '\u{061f}'
            | '\u{06d4}'
            | '\u{0589}'
            | '\u{1362}'
            | '\u{1367}'
            | '\u{104b}'
            | '\u{17d4}'
            | '\u{17d5}'
    )
}

/// Closing quotes and brackets: they stay with their sentence.
fn is_closer(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '\u{201d}'
            | '\u{2019}'
            | '\u{bb}'
            | ')'
            | ']'
            | '}'
            | '\u{300d}'
            | '\u{300f}'
            | '\u{3011}'
            | '\u{3015}'
            | '\u{3009}'
            | '\u{300b}'
            | '\u{ff09}'
            | '\u{ff3d}'
            | '\u{ff5d}'
            | '\u{ff02}'
            | '\u{ff07}'
    )
}

/// Skips the characters of `slice` from `i` that `keep` accepts.
fn skip(slice: &str, mut i: usize, keep: impl Fn(char) -> bool) -> usize {
    for c in slice[i..].chars() {
        if !keep(c) {
            break;
        }
        i += c.len_utf8();
    }
    i
}

/// Offsets right after every sentence end in text[s..e]: the matches of
/// `(?<![L])[L]++[C]*+(?=\s)|[S][LS]*[C]*` (L Latin ends, S script ends, C closers) found
/// left to right in the slice, so the look-behind sees no character before `s`. A run of
/// Latin ends is tried from its first character only and never given back: linear time.
pub fn sentence_ends(text: &str, s: usize, e: usize) -> Vec<usize> {
    let slice = &text[s..e];
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    let mut p = 0;
    while p < slice.len() {
        let c = char_at(slice, p);
        let end = if is_latin_end(c) && !prev.is_some_and(is_latin_end) {
            let q = skip(slice, skip(slice, p, is_latin_end), is_closer);
            (q < slice.len() && is_space(char_at(slice, q))).then_some(q)
        } else if is_script_end(c) {
            let q = skip(slice, p + c.len_utf8(), |c| {
                is_latin_end(c) || is_script_end(c)
            });
            Some(skip(slice, q, is_closer))
        } else {
            None
        };
        match end {
            Some(q) => {
                out.push(s + q);
                prev = Some(char_before(slice, q));
                p = q;
            }
            None => {
                prev = Some(c);
                p += c.len_utf8();
            }
        }
    }
    out
}

/// The sentences of text[s..e], trimmed, empty ones dropped.
pub fn sentences(text: &str, s: usize, e: usize) -> Vec<Span> {
    cut(text, s, e, &sentence_ends(text, s, e))
}

/// The words (runs of non-whitespace, `\S+`) of text[s..e], lazily.
pub fn words(text: &str, s: usize, e: usize) -> impl Iterator<Item = Span> + '_ {
    let mut i = s;
    std::iter::from_fn(move || {
        i = skip(&text[..e], i, is_space);
        if i >= e {
            return None;
        }
        let start = i;
        i = skip(&text[..e], i, |c| !is_space(c));
        Some((start, i))
    })
}

/// Longest whitespace kept verbatim between pieces.
pub const MAX_GAP: usize = 256;

/// Whitespace longer than this many characters is shortened between pieces (`gap`):
/// MAX_GAP, or less under a small cap (about a quarter of it with the estimate).
pub fn gap_limit(budget: i64) -> usize {
    budget.clamp(16, MAX_GAP as i64) as usize
}

/// The whitespace text[a..b] between two pieces as a chunk holds it: verbatim, unless it
/// is longer than `limit` code points (thousands of blank lines, the indentation of a list
/// nested 2,000 deep); then it keeps its first two line breaks and the last limit/2 code
/// points of its last line, since a piece must fit the cap with the whitespace before it.
pub fn gap(text: &str, a: usize, b: usize, limit: usize) -> Cow<'_, str> {
    let region = &text[a..b];
    if region.len() <= limit || region.chars().count() <= limit {
        return Cow::Borrowed(region);
    }
    let tail = b - region
        .chars()
        .rev()
        .take(limit / 2)
        .map(char::len_utf8)
        .sum::<usize>();
    let ends = line_ends(text, a, b);
    if ends.is_empty() {
        return Cow::Borrowed(&text[tail..b]);
    }
    let mut out = String::new();
    let mut prev = a;
    for &end in ends.iter().take(2) {
        // the break is the end of the run of \r and \n that `end` closes
        let start = if end >= prev + 2 && &text.as_bytes()[end - 2..end] == b"\r\n" {
            end - 2
        } else {
            end - 1
        };
        out.push_str(&text[start..end]);
        prev = end;
    }
    let last = *ends.last().unwrap();
    out.push_str(&text[last.max(tail)..b]);
    Cow::Owned(out)
}

/// Keeps a line's indentation: `pos` moved back to its line start when only whitespace
/// (Python's, line breaks aside) precedes it there, else `pos`. No-break spaces that indent
/// code pasted from a web page are text on the line: a part that began after them would
/// reopen its fence after them, mid-line.
pub fn line_start(text: &str, pos: usize) -> usize {
    let mut k = pos;
    for c in text[..pos].chars().rev() {
        if !is_space(c) || c == '\r' || c == '\n' {
            break;
        }
        k -= c.len_utf8();
    }
    let b = text.as_bytes();
    if k == 0 || b[k - 1] == b'\r' || b[k - 1] == b'\n' {
        k
    } else {
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'a>(text: &'a str, spans: &[Span]) -> Vec<&'a str> {
        spans.iter().map(|&(a, b)| &text[a..b]).collect()
    }

    #[test]
    fn trim_and_cut_use_python_whitespace() {
        let text = "\x1c a b \u{85}";
        assert_eq!(trim(text, 0, text.len()), Some((2, 5)));
        assert_eq!(trim(" \x1f ", 0, 3), None);
        assert_eq!(trim("ab", 2, 1), None);
        let text = "a\r\n\r\n b\rc\n";
        assert_eq!(pieces(text, &lines(text, 0, text.len())), ["a", "b", "c"]);
    }

    #[test]
    fn sentences_end_at_latin_marks_before_space_and_script_marks_anywhere() {
        let text = "See v1.2 now. Done!) Next?? x";
        let got = pieces(text, &sentences(text, 0, text.len()));
        assert_eq!(got, ["See v1.2 now.", "Done!)", "Next??", "x"]);
        let text = "これはペンです。次の文！最後？";
        let got = pieces(text, &sentences(text, 0, text.len()));
        assert_eq!(got, ["これはペンです。", "次の文！", "最後？"]);
        // a failed match at a mark retries after it: "a?)? b" ends after the second "?"
        assert_eq!(sentence_ends("a?)? b", 0, 6), vec![4]);
        // a run of dots is tried from its first dot only
        assert_eq!(sentence_ends("a..b.. c", 0, 8), vec![6]);
        // the look-behind sees nothing before the range
        assert_eq!(sentence_ends("x.. y", 2, 5), vec![3]);
        // \s is Python's: U+001F and U+0085 count
        assert_eq!(sentence_ends("a.\x1fb.\u{85}", 0, 7), vec![2, 5]);
    }

    #[test]
    fn words_are_runs_of_non_whitespace() {
        let text = " ab\x1ccd  e\u{3000}";
        let got: Vec<&str> = words(text, 0, text.len())
            .map(|(a, b)| &text[a..b])
            .collect();
        assert_eq!(got, ["ab", "cd", "e"]);
        assert_eq!(words("abc", 1, 2).collect::<Vec<_>>(), vec![(1, 2)]);
    }

    #[test]
    fn long_gaps_keep_two_breaks_and_the_end_of_the_last_line() {
        assert_eq!(gap(" \n  ", 0, 4, 16), " \n  ");
        let text = format!("\r\n\n\n{}", " ".repeat(40));
        assert_eq!(
            gap(&text, 0, text.len(), 16),
            format!("\r\n\n{}", " ".repeat(8))
        );
        let text = format!("\n{}\n  ", " ".repeat(40));
        assert_eq!(gap(&text, 0, text.len(), 16), "\n\n  ");
        let text = "\u{3000}".repeat(20);
        assert_eq!(gap(&text, 0, text.len(), 16), "\u{3000}".repeat(8));
        let text = format!("\u{3000}\n{}\u{85}\n", "\u{3000}".repeat(20));
        assert_eq!(gap(&text, 0, text.len(), 16), "\n\n");
        assert_eq!(gap_limit(4), 16);
        assert_eq!(gap_limit(100), 100);
        assert_eq!(gap_limit(5000), 256);
    }

    #[test]
    fn line_start_moves_back_over_indentation_only() {
        assert_eq!(line_start("a\n \u{a0} x", 5), 2);
        assert_eq!(line_start("a x", 2), 2);
        assert_eq!(line_start("  x", 2), 0);
        assert_eq!(line_start("a\r\x1fx", 3), 2);
    }
}
