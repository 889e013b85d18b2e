//! The text of inline source whose only markup is code spans, as the reference inline
//! parser (markdown-it-py, CommonMark) reduces it: a run of n backticks opens a code span
//! closed by the next run of exactly n backticks; the span's content has one space cut
//! from each end when it both starts and ends with a space and is not all whitespace; an
//! unmatched run is literal text. Any other markup character outside a code span, a line
//! break or a NUL (which that parser rewrites) leaves the text to the parser.

use crate::pyunicode::{collapse, is_blank};

/// The plain text of `inline`, or None when something besides code spans needs the
/// reference parser.
pub fn reduced(inline: &str, markup: &[char]) -> Option<String> {
    if inline.contains(['\n', '\r', '\0']) {
        return None;
    }
    let b = inline.as_bytes();
    let mut out = String::with_capacity(inline.len());
    let mut at = 0; // start of the text not yet copied
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => {
                let open = run(b, i);
                match closer(b, i + open, open) {
                    Some(close) => {
                        plain(&inline[at..i], markup, &mut out)?;
                        out.push_str(&content(&inline[i + open..close]));
                        i = close + open;
                        at = i;
                    }
                    None => i += open, // literal backticks
                }
            }
            _ => i += 1,
        }
    }
    plain(&inline[at..], markup, &mut out)?;
    Some(collapse(&out))
}

/// Text outside code spans: copied when it holds no markup but backticks.
fn plain(text: &str, markup: &[char], out: &mut String) -> Option<()> {
    let other = |c: char| c != '`' && markup.contains(&c);
    if text.contains(other) {
        return None;
    }
    out.push_str(text);
    Some(())
}

/// The length of the backtick run at `i`.
fn run(b: &[u8], i: usize) -> usize {
    b[i..].iter().take_while(|&&c| c == b'`').count()
}

/// The start of the first run of exactly `n` backticks at or after `from`.
fn closer(b: &[u8], mut from: usize, n: usize) -> Option<usize> {
    while let Some(k) = b[from..].iter().position(|&c| c == b'`') {
        let start = from + k;
        let len = run(b, start);
        if len == n {
            return Some(start);
        }
        from = start + len;
    }
    None
}

/// A code span's content: one space cut from each end when both ends are spaces and it
/// is not all whitespace.
fn content(raw: &str) -> String {
    if raw.len() >= 2 && raw.starts_with(' ') && raw.ends_with(' ') && !is_blank(raw) {
        raw[1..raw.len() - 1].to_owned()
    } else {
        raw.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKUP: &[char] = &['*', '_', '`', '[', ']', '<', '>', '&', '\\', '!', '~'];

    fn text(s: &str) -> Option<String> {
        reduced(s, MARKUP)
    }

    #[test]
    fn code_spans_give_their_content() {
        assert_eq!(
            text("The `run()` method").as_deref(),
            Some("The run() method")
        );
        assert_eq!(text("a` b `c").as_deref(), Some("abc"));
        assert_eq!(text("`` a`b ``").as_deref(), Some("a`b"));
        assert_eq!(text("`  `").as_deref(), Some(""));
        assert_eq!(text("` x`").as_deref(), Some("x"));
    }

    #[test]
    fn unmatched_runs_are_literal() {
        assert_eq!(text("a `` b ` c").as_deref(), Some("a `` b ` c"));
        assert_eq!(text("```a``").as_deref(), Some("```a``"));
    }

    #[test]
    fn markup_inside_code_spans_is_text_outside_it_is_not_decided_here() {
        assert_eq!(text("`a_b<c>` d").as_deref(), Some("a_b<c> d"));
        assert_eq!(text("`a` _b_"), None);
        assert_eq!(text("`a` b\nc"), None);
        assert_eq!(text("`a` b\0"), None);
        assert_eq!(text("a ` b_"), None);
        assert_eq!(text("`a\0`"), None);
    }
}
