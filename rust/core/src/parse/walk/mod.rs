//! The pulldown-cmark walk: the top-level blocks of a line range from one pass over
//! pulldown-cmark's events. Its blocks are those of the parser key `pyromark-0.10.3` byte for
//! byte (pyromark 0.10.3 wraps the same pulldown-cmark 0.13.5), so stored blocks under that
//! key are reused: see `parser_key` in pipeline/parse.py.
//!
//! Here: the walk over block events (leaf blocks, containers, lists, tables). Beside it:
//! - `inline`: the readers of a block's inline events, and a heading's text.
//! - `image`: whether a paragraph is exactly one image, and its alt text.

mod image;
mod inline;

use pulldown_cmark::{CodeBlockKind, Event, OffsetIter, Options, Parser, Tag};

use crate::parse::kind::Kind;
use crate::parse::lines::Lines;
use crate::parse::{Block, Fallback};
use crate::pyunicode::strip;
use image::Image;
use inline::{inline, Heading};

type Events<'a> = OffsetIter<'a, pulldown_cmark::DefaultBrokenLinkCallback>;

/// Top-level blocks of lines [first, end) of `text`, parsed as a document.
pub fn parse_lines(
    text: &str,
    lines: &Lines,
    first: usize,
    end: usize,
) -> Result<Vec<Block>, Fallback> {
    let raw = &text[lines.starts[first]..lines.ends[end - 1]];
    let src = prepared(raw);
    let starts = line_starts(&src);
    walk(&src, &starts, first)
}

/// The source pulldown-cmark is given: line endings as "\n" (pulldown-cmark mistakes a lone
/// CR in places), and every line's trailing run of blanks that holds a tab as spaces (it
/// keeps a fence open when a tab follows the closing run). Lengths and lines are kept.
pub fn prepared(raw: &str) -> String {
    let mut src = if raw.contains('\r') {
        let mut s = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(k) = rest.find('\r') {
            s.push_str(&rest[..k]);
            s.push('\n');
            rest = &rest[k + 1..];
            if let Some(r) = rest.strip_prefix('\n') {
                rest = r;
            }
        }
        s.push_str(rest);
        s
    } else {
        raw.to_owned()
    };
    if src.contains('\t') {
        src = spaces_for_trailing_tabs(&src);
    }
    src
}

fn spaces_for_trailing_tabs(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for (i, line) in src.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_end_matches([' ', '\t']);
        let run = &line[body.len()..];
        out.push_str(body);
        if run.contains('\t') {
            out.extend(std::iter::repeat_n(' ', run.len()));
        } else {
            out.push_str(run);
        }
    }
    out
}

fn line_starts(src: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr_iter(src.as_bytes()).map(|i| i + 1));
    starts
}

fn memchr_iter(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    b.iter()
        .enumerate()
        .filter(|&(_, &c)| c == b'\n')
        .map(|(i, _)| i)
}

fn no_end() -> Fallback {
    Fallback("no end event".to_owned())
}

fn walk(src: &str, starts: &[usize], delta: usize) -> Result<Vec<Block>, Fallback> {
    let line_of = |off: usize| starts.partition_point(|&s| s <= off) - 1 + delta;
    let mut out = Vec::new();
    let mut events = Parser::new_ext(src, Options::ENABLE_TABLES).into_offset_iter();
    while let Some((ev, rng)) = events.next() {
        let line = line_of(rng.start);
        let tag = match ev {
            Event::Rule => {
                out.push(Block::new(Kind::ThematicBreak, line, line));
                continue;
            }
            Event::Start(tag) => tag,
            _ => continue,
        };
        let mut block = Block::new(Kind::Paragraph, line, line);
        let end = match tag {
            Tag::Paragraph => paragraph(&mut events, &mut block, src, rng.start)?,
            Tag::HtmlBlock => {
                block.kind = Kind::Html;
                leaf(&mut events)?
            }
            Tag::BlockQuote(_) => {
                block.kind = Kind::Blockquote;
                nested_from(&mut events, 1)?
            }
            Tag::Heading { level, .. } => {
                block.kind = Kind::Heading;
                block.level = Some(level as u8);
                inline(&mut events, &mut block, &mut Heading::default())?
            }
            Tag::CodeBlock(kind) => {
                block.kind = Kind::Code;
                block.info = match kind {
                    CodeBlockKind::Fenced(info) => Some(strip(&info).to_owned()),
                    CodeBlockKind::Indented => None,
                };
                leaf(&mut events)?
            }
            Tag::List(_) => {
                block.kind = Kind::List;
                let (end, items) = list(&mut events)?;
                block.items = Some(items.into_iter().map(line_of).collect());
                end
            }
            Tag::Table(_) => {
                block.kind = Kind::Table;
                let (end, rows) = table(&mut events)?;
                block.n_rows = Some(rows);
                end
            }
            other => return Err(Fallback(format!("unexpected top-level block {other:?}"))),
        };
        block.last = line_of(end - 1);
        out.push(block);
    }
    Ok(out)
}

/// A block that holds only text (HTML and code blocks): its first End event is its own.
fn leaf(events: &mut Events) -> Result<usize, Fallback> {
    for (ev, rng) in events {
        if let Event::End(_) = ev {
            return Ok(rng.end);
        }
    }
    Err(no_end())
}

/// The end of the block `depth` levels out: its remaining events are skipped.
fn nested_from(events: &mut Events, mut depth: usize) -> Result<usize, Fallback> {
    for (ev, rng) in events {
        match ev {
            Event::End(_) => {
                depth -= 1;
                if depth == 0 {
                    return Ok(rng.end);
                }
            }
            Event::Start(_) => depth += 1,
            _ => {}
        }
    }
    Err(no_end())
}

/// A list ends where its last item ends; the start offset of every item.
fn list(events: &mut Events) -> Result<(usize, Vec<usize>), Fallback> {
    let (mut items, mut item_end, mut depth) = (Vec::new(), 0, 1);
    for (ev, rng) in events {
        match ev {
            Event::End(_) => {
                depth -= 1;
                if depth == 0 {
                    return Ok((item_end, items));
                }
            }
            Event::Start(_) => {
                if depth == 1 {
                    items.push(rng.start);
                    item_end = rng.end;
                }
                depth += 1;
            }
            _ => {}
        }
    }
    Err(no_end())
}

/// A table counts its body rows (the header is no TableRow).
fn table(events: &mut Events) -> Result<(usize, i32), Fallback> {
    let (mut rows, mut depth) = (0, 1);
    for (ev, rng) in events {
        match ev {
            Event::End(_) => {
                depth -= 1;
                if depth == 0 {
                    return Ok((rng.end, rows));
                }
            }
            Event::Start(tag) => {
                if depth == 1 && matches!(tag, Tag::TableRow) {
                    rows += 1;
                }
                depth += 1;
            }
            _ => {}
        }
    }
    Err(no_end())
}

/// Only a paragraph whose source starts with `![` or `[![` can be one image.
fn paragraph(
    events: &mut Events,
    block: &mut Block,
    src: &str,
    start: usize,
) -> Result<usize, Fallback> {
    let head = &src.as_bytes()[start..];
    if head.starts_with(b"![") || head.starts_with(b"[![") {
        return inline(events, block, &mut Image::new(start));
    }
    nested_from(events, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(Kind, usize, usize)> {
        let lines = Lines::of(text);
        parse_lines(text, &lines, 0, lines.len())
            .unwrap()
            .iter()
            .map(|b| (b.kind, b.first, b.last))
            .collect()
    }

    #[test]
    fn line_endings_become_lf_and_trailing_tabs_spaces() {
        assert_eq!(prepared("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(prepared("x \t\n\ty\t"), "x  \n\ty ");
        assert_eq!(prepared("a  \nb"), "a  \nb");
    }

    #[test]
    fn blocks_by_line() {
        use Kind::*;
        let text = "# T\r\rpara\rgraph\r\r```\rcode\r```\t\r\r- a\r- b\r\r[x]: /u\r";
        assert_eq!(
            spans(text),
            vec![
                (Heading, 0, 0),
                (Paragraph, 2, 3),
                (Code, 5, 7),
                (List, 9, 11) // the trailing blank line is trimmed later (fill_gaps)
            ]
        );
    }

    #[test]
    fn headings_images_tables() {
        let text = "## a *b*  \n\n[![alt `c`](i)](l)\n\n| a |\n|---|\n| 1 |\n| 2 |\n";
        let lines = Lines::of(text);
        let blocks = parse_lines(text, &lines, 0, lines.len()).unwrap();
        assert_eq!(blocks[0].title.as_deref(), Some("a b"));
        assert_eq!(blocks[0].level, Some(2));
        assert_eq!(blocks[1].kind, Kind::Image);
        assert_eq!(blocks[1].alt.as_deref(), Some("alt c"));
        assert_eq!(blocks[2].n_rows, Some(2));
    }
}
