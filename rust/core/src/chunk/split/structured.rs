//! Lists, HTML, JSX, front matter, quotes: fine pieces, with fenced code kept whole (or
//! split as code, fence re-opened), tables kept whole (or split by rows, header repeated)
//! and list items cut at item starts first.

use super::fine::{fine_spans, Level};
use super::text::{cut, gap_limit, line_start, trim};
use super::{Piece, Split};
use crate::parse::fence::{closes_fence, opens_fence};
use crate::parse::lines::Lines;
use crate::pyunicode::is_blank;
use crate::tokens::counter::Counter;

impl<C: Counter> Split<'_, '_, C> {
    /// The pieces of the whole text; `cuts`: list item starts (sorted, distinct).
    pub fn structured(&mut self, levels: &[Level], cuts: &[usize]) -> Result<Vec<Piece>, C::Error> {
        let text = self.text;
        let mut out = Vec::new();
        for (s, e, is_fence) in fence_regions(text) {
            if !is_fence && text[s..e].contains('|') {
                for (a, b, rows) in table_regions(text, s, e) {
                    match rows {
                        None => out.extend(self.fine(a, b, cuts, levels)?),
                        Some(rows) => out.extend(self.nested_table(a, b, rows)?),
                    }
                }
            } else if is_fence {
                let whole = self.whole(s, e)?; // from the line start: the fence's indentation
                if whole.tokens <= self.budget {
                    out.push(whole);
                    continue;
                }
                let base = whole.start;
                let mut code = Split {
                    text: &whole.text,
                    budget: self.budget,
                    group_tokens: self.group_tokens,
                    count: &mut *self.count,
                };
                for p in code.code()? {
                    out.push(Piece::new(p.text, base + p.start, base + p.end, p.tokens));
                }
            } else {
                out.extend(self.fine(s, e, cuts, levels)?);
            }
        }
        Ok(out)
    }

    /// Fine pieces of text[s..e], cut at the list item starts `cuts` first.
    pub fn fine(
        &mut self,
        s: usize,
        e: usize,
        cuts: &[usize],
        levels: &[Level],
    ) -> Result<Vec<Piece>, C::Error> {
        let text = self.text;
        let inside: Vec<usize> = cuts.iter().copied().filter(|&c| s < c && c < e).collect();
        let limit = gap_limit(self.budget);
        let mut out = Vec::new();
        for (a, b) in cut(text, s, e, &inside) {
            for (x, y, n) in fine_spans(text, a, b, levels, self.budget, self.count, limit)? {
                out.push(Piece::new(text[x..y].to_owned(), x, y, n));
            }
        }
        Ok(out)
    }

    /// text[s..e] as one piece, trimmed, from the start of its first line (its indentation
    /// or container markers kept).
    pub fn whole(&mut self, s: usize, e: usize) -> Result<Piece, C::Error> {
        let (start, end) = trim(self.text, s, e).unwrap_or((s, e));
        let base = line_start(self.text, start);
        let text = &self.text[base..end];
        let tokens = self.count.count_one(text)?;
        Ok(Piece::new(text.to_owned(), base, end, tokens))
    }
}

/// Cover text with (start, end, is_fence) regions: fenced code is never cut by lines. A
/// fence region ends with its closing line (its line ending is in the next region).
pub fn fence_regions(text: &str) -> Vec<(usize, usize, bool)> {
    let lines = Lines::of(text);
    let mut out = Vec::new();
    let mut pos = 0;
    let mut fence: Option<&str> = None;
    for (&start, &end) in lines.starts.iter().zip(&lines.ends) {
        if start == text.len() {
            break; // the empty line after a final line ending
        }
        let line = &text[start..end];
        match fence {
            None => {
                if let Some(run) = opens_fence(line) {
                    if pos < start {
                        out.push((pos, start, false));
                    }
                    (fence, pos) = (Some(run), start);
                }
            }
            Some(run) => {
                if closes_fence(line, run) {
                    out.push((pos, end, true));
                    (fence, pos) = (None, end);
                }
            }
        }
    }
    if pos < text.len() {
        out.push((pos, text.len(), fence.is_some()));
    }
    out
}

/// Cover text[s..e] with (start, end, rows_start) regions: a GFM table inside a quote or a
/// list item gives the offset where its body rows start, any other region None. Its lines,
/// once the container's markers and indentation are stripped, are a header row and a
/// delimiter row (both with a pipe), then rows with a pipe, up to a blank line.
pub fn table_regions(text: &str, s: usize, e: usize) -> Vec<(usize, usize, Option<usize>)> {
    let slice = &text[s..e];
    let table = Lines::of(slice);
    let mut lines = Vec::new(); // (start, end with the line ending)
    let mut bare = Vec::new();
    for i in 0..table.len() {
        let start = table.starts[i];
        let end = table.starts.get(i + 1).copied().unwrap_or(slice.len());
        if end > start {
            lines.push((s + start, s + end));
            let line = table.line(slice, i);
            bare.push(&line[container_end(line)..]);
        }
    }
    let mut out = Vec::new();
    let (mut pos, mut i) = (s, 0);
    while i + 2 < lines.len() {
        let (head, delim) = (bare[i], bare[i + 1]);
        if head.contains('|') && delim.contains('|') && is_delimiter_row(delim) {
            let mut j = i + 2;
            while j < lines.len() && !is_blank(bare[j]) && bare[j].contains('|') {
                j += 1;
            }
            if j > i + 2 {
                if pos < lines[i].0 {
                    out.push((pos, lines[i].0, None));
                }
                out.push((lines[i].0, lines[j - 1].1, Some(lines[i + 2].0)));
                (pos, i) = (lines[j - 1].1, j);
                continue;
            }
        }
        i += 1;
    }
    if pos < e {
        out.push((pos, e, None));
    }
    out
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// Where a line's container markers and indentation end: the match of
/// `[ \t]*(?:>[ \t]?)*[ \t]*` at its start.
fn container_end(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = skip_blanks(b, 0);
    while i < b.len() && b[i] == b'>' {
        i += 1;
        if i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
    }
    skip_blanks(b, i)
}

/// One cell of a delimiter row from `i`: `[ \t]*:?-+:?[ \t]*`; its end.
fn delimiter_cell(b: &[u8], i: usize) -> Option<usize> {
    let mut i = skip_blanks(b, i);
    i += usize::from(b.get(i) == Some(&b':'));
    let dashes = b[i..].iter().take_while(|&&c| c == b'-').count();
    if dashes == 0 {
        return None;
    }
    i += dashes;
    i += usize::from(b.get(i) == Some(&b':'));
    Some(skip_blanks(b, i))
}

/// Does `line` fully match `\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*+`?
/// Every choice there is forced (taking an optional pipe or colon never makes a match
/// fail that leaving it would make succeed), so one pass decides: linear time.
fn is_delimiter_row(line: &str) -> bool {
    let b = line.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'|'));
    let Some(mut i2) = delimiter_cell(b, i) else {
        return false;
    };
    while b.get(i2) == Some(&b'|') {
        match delimiter_cell(b, i2 + 1) {
            Some(next) => i2 = next,
            None => break,
        }
    }
    i = i2 + usize::from(b.get(i2) == Some(&b'|'));
    skip_blanks(b, i) == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_regions_cover_the_text() {
        let text = "a\n```\nx\n```\nb\n~~~\nopen";
        let got = fence_regions(text);
        assert_eq!(
            got,
            vec![
                (0, 2, false),
                (2, 11, true),
                (11, 14, false),
                (14, 22, true)
            ]
        );
        assert_eq!(fence_regions(""), vec![]);
        assert_eq!(fence_regions("a\r\n"), vec![(0, 3, false)]);
    }

    #[test]
    fn delimiter_rows_and_containers() {
        for row in ["|---|", "--- | :-:", "| :--- |---: |  ", "-"] {
            assert!(is_delimiter_row(row), "{row}");
        }
        for row in ["|", "||", "--- x", "| -- | |", ":-:-"] {
            assert!(!is_delimiter_row(row), "{row}");
        }
        assert_eq!(container_end("> > x"), 4);
        assert_eq!(container_end(">  > x"), 3);
        assert_eq!(container_end("  - x"), 2);
    }

    #[test]
    fn tables_in_quotes_are_found_with_their_rows() {
        let text = "> intro\n> | a | b |\n> |---|---|\n> | 1 | 2 |\n>\n> after";
        let got = table_regions(text, 0, text.len());
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (0, 8, None));
        let (a, b, rows) = got[1];
        assert_eq!(
            (&text[a..b], rows),
            ("> | a | b |\n> |---|---|\n> | 1 | 2 |\n", Some(32))
        );
        assert_eq!(got[2].2, None);
    }
}
