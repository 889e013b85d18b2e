//! Splitting one oversized block, by kind: the only place that knows
//! how to cut markdown.
//!
//! `split_block` returns pieces whose texts are valid markdown on their own and whose spans
//! (relative to the block text) together cover every character of the block but
//! whitespace. Code and tables give parts, already grouped toward `group_tokens` (code by
//! lines with the fence re-opened in every part, tables by rows under their header); every
//! other kind gives fine pieces (source slices) that the packer groups: lists between
//! top-level items, HTML/JSX/front matter by lines, quotes by lines then sentences,
//! paragraphs by sentences; then words, then characters, each piece within the budget.
//!
//! Offsets are byte offsets here; `char_offsets` and `byte_offsets` convert the spans and
//! item starts to and from Python's code points at the edge.
//!
//! - `structured`: lists, HTML, JSX, front matter and quotes as fine pieces, fenced code
//!   and tables inside them kept whole or wrapped, list items cut at their starts first.
//! - `wrap`: code and tables cut into parts that repeat their fence or header.
//! - `fine`: a span cut by lines, then sentences, words, characters, only where still over
//!   the budget; pieces grouped under a limit.
//! - `text`: where text may be cut: trimmed spans, lines, sentences, words, and the
//!   whitespace kept between pieces.
//! - `graphemes`: grapheme cluster and code-point boundaries, for words over the budget.

mod fine;
mod graphemes;
mod structured;
mod text;
mod wrap;

pub use fine::{chars, group, Level};
pub use graphemes::graphemes;
pub use text::{gap, gap_limit, sentences, MAX_GAP};

use crate::tokens::counter::Counter;
use fine::Level::{Line, Sentence, Word};

/// One piece of a block: its text and the byte range of the block text it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub tokens: i64,
}

impl Piece {
    fn new(text: String, start: usize, end: usize, tokens: i64) -> Piece {
        Piece {
            text,
            start,
            end,
            tokens,
        }
    }
}

/// The block being split and how: its text, the budget of a piece, the size parts are
/// grouped toward, and the counter every count goes through.
struct Split<'t, 'c, C: Counter> {
    text: &'t str,
    budget: i64,
    group_tokens: i64,
    count: &'c mut C,
}

/// How the fine pieces of a kind are cut, in order (characters come last, always).
pub fn levels_of(kind: &str) -> &'static [Level] {
    match kind {
        // lists: after cutting between top-level items; "text": plain text
        "list" | "blockquote" | "text" => &[Line, Sentence, Word],
        // "fixed": the fixed strategy, which ignores structure
        "html" | "mdx_jsx" | "mdx_esm" | "front_matter" | "fixed" => &[Line, Word],
        _ => &[Sentence, Word], // paragraphs, headings
    }
}

/// Pieces of one block (`kind`, `text`) that alone exceeds `budget` tokens. Each piece fits
/// `budget` (as `count` counts) unless even a single character does not. `item_starts`:
/// byte offsets where the block's list items start (any order, repeats allowed).
pub fn split_block<C: Counter>(
    kind: &str,
    text: &str,
    budget: i64,
    group_tokens: i64,
    count: &mut C,
    item_starts: &[usize],
) -> Result<Vec<Piece>, C::Error> {
    let mut split = Split {
        text,
        budget,
        group_tokens,
        count,
    };
    match kind {
        "code" => split.code(),
        "table" => split.table(),
        _ => {
            let mut cuts = item_starts.to_vec();
            cuts.sort_unstable();
            cuts.dedup();
            split.structured(levels_of(kind), &cuts)
        }
    }
}

/// Code-point offsets of the byte offsets `bytes` (each at a character boundary of `text`).
pub fn char_offsets(text: &str, bytes: &[usize]) -> Vec<usize> {
    if text.is_ascii() {
        return bytes.to_vec();
    }
    let mut order: Vec<usize> = (0..bytes.len()).collect();
    order.sort_unstable_by_key(|&i| bytes[i]);
    let mut out = vec![0; bytes.len()];
    let (mut at, mut chars) = (0, 0);
    for i in order {
        chars += text[at..bytes[i]].chars().count();
        at = bytes[i];
        out[i] = chars;
    }
    out
}

/// Byte offsets of the code-point offsets `chars` of `text`; offsets past its end give its
/// length, negative ones 0.
pub fn byte_offsets(text: &str, chars: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..chars.len()).collect();
    order.sort_unstable_by_key(|&i| chars[i]);
    let mut bounds = text.char_indices().map(|(b, _)| b).chain([text.len()]);
    let (mut k, mut at) = (0, bounds.next()); // `at`: the byte offset of code point k
    let mut out = vec![0; chars.len()];
    for i in order {
        let want = usize::try_from(chars[i]).unwrap_or(0);
        while k < want && at.is_some() {
            at = bounds.next();
            k += 1;
        }
        out[i] = at.unwrap_or(text.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::counter::CodePoints;

    fn split(kind: &str, text: &str, budget: i64) -> Vec<(String, usize, usize)> {
        split_block(kind, text, budget, budget, &mut CodePoints, &[])
            .unwrap()
            .into_iter()
            .map(|p| (p.text, p.start, p.end))
            .collect()
    }

    #[test]
    fn offsets_convert_both_ways() {
        let text = "aé日😀b";
        assert_eq!(char_offsets(text, &[10, 0, 3, 6, 11]), vec![4, 0, 2, 3, 5]);
        assert_eq!(
            byte_offsets(text, &[4, 0, 2, 3, 5, 9, -1]),
            vec![10, 0, 3, 6, 11, 11, 0]
        );
        assert_eq!(char_offsets("ab", &[1]), vec![1]);
    }

    #[test]
    fn code_parts_reopen_their_fence() {
        let body: Vec<String> = (0..40).map(|i| format!("line_{i}();")).collect();
        let text = format!("```rust\n{}\n```", body.join("\n"));
        let parts = split("code", &text, 120);
        assert!(parts.len() > 3);
        for (t, _, _) in &parts {
            assert!(t.starts_with("```rust\n") && t.ends_with("\n```"), "{t}");
            assert!(t.chars().count() <= 120);
        }
        assert_eq!(parts[0].1, 0);
        assert_eq!(parts.last().unwrap().2, text.len());
    }

    #[test]
    fn unclosed_fences_close_with_their_container() {
        let body: Vec<String> = (0..30).map(|i| format!("> x{i}")).collect();
        let text = format!("> ~~~\n{}", body.join("\n"));
        for (t, _, _) in split("code", &text, 60) {
            assert!(t.starts_with("> ~~~\n") && t.ends_with("\n> ~~~"), "{t}");
        }
    }

    #[test]
    fn table_parts_repeat_the_header() {
        let rows: Vec<String> = (0..30).map(|i| format!("| {i} | value {i} |")).collect();
        let text = format!("| a | b |\n|---|---|\n{}", rows.join("\n"));
        let parts = split("table", &text, 100);
        assert!(parts.len() > 2);
        assert!(parts
            .iter()
            .all(|(t, _, _)| t.starts_with("| a | b |\n|---|---|\n")));
    }

    #[test]
    fn lists_are_cut_at_item_starts_and_keep_fences_whole() {
        let text = "- one two\n- ```\n  code\n  ```\n- three four";
        let starts = [0, 10, 29];
        let pieces = split_block("list", text, 20, 20, &mut CodePoints, &starts).unwrap();
        let got: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(got, ["- one two", "- ```\n  code\n  ```", "- three four"]);
    }

    #[test]
    fn paragraphs_are_cut_by_sentences_then_words() {
        // runs of words are a sixteenth of the budget: single words here
        let got = split("paragraph", "One two. Three four five six.", 12);
        let texts: Vec<&str> = got.iter().map(|(t, _, _)| t.as_str()).collect();
        assert_eq!(texts, ["One two.", "Three", "four", "five", "six."]);
    }
}
