//! Fence lines: where fenced code opens and closes, line by line.

use std::borrow::Cow;

use crate::pyunicode::is_decimal;

/// The fence run (``` or ~~~ ...) when `line` opens fenced code, else None. The match of
/// `([ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?)(`{3,}|~{3,})(.*)` at the line start (it
/// never backtracks into a different match), without a backtick in the rest after a
/// backtick run.
pub fn opens_fence(line: &str) -> Option<&str> {
    let run_start = fence_run_start(line)?;
    let rest = &line[run_start..];
    let ch = rest.as_bytes()[0];
    let n = rest.bytes().take_while(|&b| b == ch).count();
    if n < 3 {
        return None;
    }
    if ch == b'`' && rest[n..].contains('`') {
        return None;
    }
    Some(&rest[..n])
}

/// What stands before the fence run on an opening line (indentation, markers): the first
/// group of the match of `opens_fence`'s pattern (the backtick rule aside), "" without one.
pub fn fence_prefix(line: &str) -> &str {
    match fence_run_start(line) {
        Some(i) => {
            let ch = line.as_bytes()[i];
            let n = line.as_bytes()[i..]
                .iter()
                .take_while(|&&b| b == ch)
                .count();
            if n >= 3 {
                &line[..i]
            } else {
                ""
            }
        }
        None => "",
    }
}

/// The start of a line that stays in the containers of a line that starts with `prefix`
/// (a `fence_prefix`): block quote markers kept, list markers and their numbers as spaces.
/// A prefix holds only decimal digits, so Python's `isdigit` there is `is_decimal`.
pub fn continuation(prefix: &str) -> String {
    prefix
        .chars()
        .map(|c| {
            if "-*+.)".contains(c) || is_decimal(c) {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// The line ending `text` uses (its first one; "\n" when it has none): what a line added
/// to it ends with, so a CRLF document's pieces stay CRLF.
pub fn line_end(text: &str) -> &'static str {
    let b = text.as_bytes();
    match b.iter().position(|&c| c == b'\r' || c == b'\n') {
        Some(i) if b[i] == b'\n' => "\n",
        Some(i) if b.get(i + 1) == Some(&b'\n') => "\r\n",
        Some(_) => "\r",
        None => "\n",
    }
}

/// Byte offset where the fence run would start (after the prefix group), when the byte
/// there is ` or ~.
fn fence_run_start(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = b
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t' || c == b'>')
        .count();
    // optional list marker: [-*+] or 1-9 Unicode decimal digits then [.)], then [ \t]+
    if let Some(after) = marker_end(line, i) {
        let spaces = b[after..]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        if spaces > 0 && matches!(b.get(after + spaces), Some(b'`') | Some(b'~')) {
            i = after + spaces;
        }
    }
    matches!(b.get(i), Some(b'`') | Some(b'~')).then_some(i)
}

fn marker_end(line: &str, i: usize) -> Option<usize> {
    let rest = &line[i..];
    match rest.as_bytes().first() {
        Some(b'-') | Some(b'*') | Some(b'+') => return Some(i + 1),
        None => return None,
        _ => {}
    }
    let mut digits = 0;
    let mut k = i;
    for c in rest.chars() {
        if digits < 9 && is_decimal(c) {
            digits += 1;
            k += c.len_utf8();
        } else {
            break;
        }
    }
    if digits == 0 {
        return None;
    }
    matches!(line.as_bytes().get(k), Some(b'.') | Some(b')')).then_some(k + 1)
}

/// Does `line` close a fence opened by `fence`?
pub fn closes_fence(line: &str, fence: &str) -> bool {
    let body = line.trim_start_matches([' ', '\t', '>']);
    let ch = fence.as_bytes()[0];
    let run = body.bytes().take_while(|&b| b == ch).count();
    run >= fence.len() && body[run..].bytes().all(|b| b == b' ' || b == b'\t')
}

/// (prefix, run) of a fence that `text` opens and does not close (lines as CommonMark
/// ends them: `\r\n`, `\r` or `\n`).
pub fn open_fence(text: &str) -> Option<(&str, &str)> {
    if !text.contains("```") && !text.contains("~~~") {
        return None;
    }
    let mut found: Option<(&str, &str)> = None;
    for line in text.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
        if !line.contains("```") && !line.contains("~~~") {
            continue; // opens no fence and closes none
        }
        match found {
            None => found = opens_fence(line).map(|run| (fence_prefix(line), run)),
            Some((_, run)) if closes_fence(line, run) => found = None,
            Some(_) => {}
        }
    }
    found
}

/// `text` with a closing fence line added when it leaves a fence open (an unclosed fence
/// runs to the end of its document in CommonMark; alone in a chunk it must close).
pub fn closed(text: &str) -> Cow<'_, str> {
    match open_fence(text) {
        None => Cow::Borrowed(text),
        Some((prefix, run)) => Cow::Owned(format!(
            "{text}{}{}{run}",
            line_end(text),
            continuation(prefix)
        )),
    }
}

/// For every line: is it part of a fenced region (opening and closing lines included)?
pub fn fenced_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<bool> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in lines {
        match fence {
            None => {
                fence = opens_fence(line);
                out.push(fence.is_some());
            }
            Some(f) => {
                out.push(true);
                if closes_fence(line, f) {
                    fence = None;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openings() {
        assert_eq!(opens_fence("```rust"), Some("```"));
        assert_eq!(opens_fence("  > - ~~~~ x"), Some("~~~~"));
        assert_eq!(opens_fence("12) ```"), Some("```"));
        assert_eq!(opens_fence("١٢. ```"), Some("```"));
        assert_eq!(opens_fence("1234567890. ```"), None);
        assert_eq!(opens_fence("``` a`b"), None);
        assert_eq!(opens_fence("~~~ a`b"), Some("~~~"));
        assert_eq!(opens_fence("``"), None);
        assert_eq!(opens_fence("-```"), None);
        assert_eq!(opens_fence("a ```"), None);
    }

    #[test]
    fn prefixes_continuations_and_line_ends() {
        assert_eq!(fence_prefix("  > 12. ```x"), "  > 12. ");
        assert_eq!(fence_prefix("``` a`b"), "");
        assert_eq!(fence_prefix("- ~~~"), "- ");
        assert_eq!(fence_prefix("- ``"), "");
        assert_eq!(continuation("> 12) "), ">     ");
        assert_eq!(continuation("\t* "), "\t  ");
        assert_eq!(line_end("a\r\nb\n"), "\r\n");
        assert_eq!(line_end("a\rb\n"), "\r");
        assert_eq!(line_end("ab"), "\n");
    }

    #[test]
    fn open_fences_are_closed_in_their_containers() {
        assert_eq!(closed("```py\nx = 1\r\n```"), "```py\nx = 1\r\n```");
        assert_eq!(closed("a ``` b"), "a ``` b");
        assert_eq!(closed("> - ~~~~\r\n> - x"), "> - ~~~~\r\n> - x\r\n>   ~~~~");
        assert_eq!(closed("1. ```\n   a"), "1. ```\n   a\n   ```");
        assert_eq!(open_fence("```\n```\n~~~ x"), Some(("", "~~~")));
    }

    #[test]
    fn closings_and_regions() {
        assert!(closes_fence(" > ````\t ", "```"));
        assert!(!closes_fence("``", "```"));
        assert!(!closes_fence("``` x", "```"));
        assert!(!closes_fence("~~~", "```"));
        let lines = ["a", "```", "", "x", "```", "b", "~~~", "c"];
        assert_eq!(
            fenced_lines(lines),
            vec![false, true, true, true, true, false, true, true]
        );
    }
}
