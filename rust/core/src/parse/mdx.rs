//! MDX segmentation: top-level ESM statements and JSX component blocks by line.

use crate::parse::fence::{closes_fence, opens_fence};
use crate::pyunicode::{is_blank, is_space, is_word};

pub const SCAN_BUDGET_PER_CHAR: i64 = 2;
pub const SCAN_BUDGET_FLOOR: i64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    Md,
    Esm,
    Jsx,
}

/// (kind, first line, end line exclusive) ranges covering lines[start..]. `chars[i]` is
/// the length of line i in code points (the look-ahead budget counts code points).
pub fn segments(lines: &[&str], chars: &[usize], start: usize) -> Vec<(Segment, usize, usize)> {
    let mut out = Vec::new();
    let mut md_from = start;
    let mut i = start;
    let mut fence: Option<&str> = None;
    let n = lines.len();
    let mut budget =
        SCAN_BUDGET_FLOOR + SCAN_BUDGET_PER_CHAR * chars.iter().map(|&c| c as i64).sum::<i64>();
    while i < n {
        let line = lines[i];
        if let Some(f) = fence {
            if closes_fence(line, f) {
                fence = None;
            }
            i += 1;
            continue;
        }
        let after_blank = i == start || is_blank(lines[i - 1]);
        let found = if after_blank {
            mdx_block_end(lines, chars, i, &mut budget)
        } else {
            None
        };
        let Some((end, kind)) = found else {
            fence = opens_fence(line);
            i += 1;
            continue;
        };
        if md_from < i {
            out.push((Segment::Md, md_from, i));
        }
        out.push((kind, i, end));
        i = end;
        md_from = end;
    }
    if md_from < n {
        out.push((Segment::Md, md_from, n));
    }
    out
}

fn mdx_block_end(
    lines: &[&str],
    chars: &[usize],
    i: usize,
    budget: &mut i64,
) -> Option<(usize, Segment)> {
    let line = lines[i];
    if is_esm(line) {
        return Some((next_blank(lines, i), Segment::Esm));
    }
    let name = jsx_open(line)?;
    jsx_end(lines, chars, i, name, budget).map(|end| (end, Segment::Jsx))
}

/// `(import|export)[\s{*]` at the line start
fn is_esm(line: &str) -> bool {
    let rest = line
        .strip_prefix("import")
        .or_else(|| line.strip_prefix("export"));
    match rest.and_then(|r| r.chars().next()) {
        Some(c) => c == '{' || c == '*' || is_space(c),
        None => false,
    }
}

/// The name of ` {0,3}<([A-Z][\w.:-]*|>)` at the line start ("" for a fragment).
fn jsx_open(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    if spaces > 3 {
        return None;
    }
    let rest = line[spaces..].strip_prefix('<')?;
    match rest.as_bytes().first() {
        Some(b'>') => Some(""),
        Some(b'A'..=b'Z') => Some(&rest[..tag_name_len(rest)]),
        _ => None,
    }
}

/// Length in bytes of the `[\w.:-]*` match at the start of `s`.
fn tag_name_len(s: &str) -> usize {
    s.char_indices()
        .find(|&(_, c)| !(is_word(c) || c == '.' || c == ':' || c == '-'))
        .map_or(s.len(), |(k, _)| k)
}

fn next_blank(lines: &[&str], i: usize) -> usize {
    let mut j = i + 1;
    while j < lines.len() && !is_blank(lines[j]) {
        j += 1;
    }
    j
}

fn jsx_end(
    lines: &[&str],
    chars: &[usize],
    i: usize,
    name: &str,
    budget: &mut i64,
) -> Option<usize> {
    let mut scanner = TagScanner::new(name);
    let mut fence: Option<&str> = None;
    for j in i..lines.len() {
        let line = lines[j];
        *budget -= chars[j] as i64 + 1;
        if *budget < 0 && j > i {
            break;
        }
        if let Some(f) = fence {
            if closes_fence(line, f) {
                fence = None;
            }
            continue;
        }
        if !scanner.in_tag && j > i {
            fence = opens_fence(line);
            if fence.is_some() {
                continue;
            }
        }
        if let Some(rest) = scanner.feed(line) {
            return if is_blank(rest) { Some(j + 1) } else { None };
        }
    }
    Some(next_blank(lines, i))
}

/// Counts opening and closing tags of one element name across lines.
struct TagScanner<'n> {
    name: &'n str,
    depth: i64,
    in_tag: bool,
    closing: bool,
    quote: Option<u8>,
    braces: i64,
}

impl<'n> TagScanner<'n> {
    fn new(name: &'n str) -> Self {
        TagScanner {
            name,
            depth: 0,
            in_tag: false,
            closing: false,
            quote: None,
            braces: 0,
        }
    }

    /// Consume a line; the text after the element's end if it ended here. Offsets are
    /// bytes: every character the scanner stops at is ASCII.
    fn feed<'l>(&mut self, line: &'l str) -> Option<&'l str> {
        let b = line.as_bytes();
        let (mut k, n) = (0, b.len());
        while k < n {
            if self.in_tag {
                k = self.in_tag_at(line, k);
                if !self.in_tag && self.depth == 0 {
                    return Some(&line[k..]);
                }
                continue;
            }
            match b[k] {
                b'`' => {
                    k = match memfind(b, b'`', k + 1) {
                        Some(close) => close + 1,
                        None => n,
                    };
                }
                b'<' => k = self.open_tag(line, k),
                _ => {
                    k = b[k + 1..]
                        .iter()
                        .position(|&c| c == b'`' || c == b'<')
                        .map_or(n, |p| k + 1 + p);
                }
            }
        }
        None
    }

    fn open_tag(&mut self, line: &str, k: usize) -> usize {
        let closing = line[k..].starts_with("</");
        let start = k + if closing { 2 } else { 1 };
        let tag = &line[start..start + tag_name_len(&line[start..])];
        let next = line.as_bytes().get(start);
        if tag != self.name || (tag.is_empty() && !matches!(next, Some(b'>') | None)) {
            return k + 1;
        }
        self.in_tag = true;
        self.closing = closing;
        self.quote = None;
        self.braces = 0;
        start + tag.len()
    }

    /// One step inside a tag, from byte `k` (a character boundary); the next offset.
    fn in_tag_at(&mut self, line: &str, k: usize) -> usize {
        let c = line[k..].chars().next().unwrap_or('\0');
        let step = k + c.len_utf8();
        if let Some(q) = self.quote {
            if c as u32 == q as u32 {
                self.quote = None;
            }
        } else if (c == '"' || c == '\'') && self.braces == 0 {
            self.quote = Some(c as u8);
        } else if c == '{' {
            self.braces += 1;
        } else if c == '}' {
            self.braces = (self.braces - 1).max(0);
        } else if self.braces == 0 && c == '/' && line[k..].starts_with("/>") {
            self.in_tag = false;
            return k + 2;
        } else if self.braces == 0 && c == '>' {
            self.in_tag = false;
            self.depth += if self.closing { -1 } else { 1 };
            return k + 1;
        }
        step
    }
}

fn memfind(b: &[u8], needle: u8, from: usize) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&c| c == needle)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(text: &str) -> Vec<(Segment, usize, usize)> {
        let lines: Vec<&str> = text.split('\n').collect();
        let chars: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
        segments(&lines, &chars, 0)
    }

    #[test]
    fn esm_and_jsx_blocks() {
        use Segment::*;
        assert_eq!(
            segs("import X from 'x'\n\n# T\n\n<Note a=\"</Note>\">\n\nhi\n</Note>\n\nend"),
            vec![(Esm, 0, 1), (Md, 1, 4), (Jsx, 4, 8), (Md, 8, 10)]
        );
        // inline JSX followed by prose stays markdown
        assert_eq!(segs("<Tip>a</Tip> more"), vec![(Md, 0, 1)]);
        // never closed: to the next blank line
        assert_eq!(segs("<Tip>\nx\n\ny"), vec![(Jsx, 0, 2), (Md, 2, 4)]);
        // not after a blank line, inside fences, indented 4
        assert_eq!(segs("a\n<Tip/>"), vec![(Md, 0, 2)]);
        assert_eq!(segs("```\n\n<Tip/>\n```"), vec![(Md, 0, 4)]);
        assert_eq!(segs("    <Tip/>"), vec![(Md, 0, 1)]);
        assert_eq!(segs("<>\n`</>`\n</>"), vec![(Jsx, 0, 3)]);
        assert_eq!(segs("exporter\n"), vec![(Md, 0, 2)]);
    }
}
