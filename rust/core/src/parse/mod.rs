//! From a document's bytes to its blocks. `parse`, here: one document's text -> its
//! top-level blocks by line.
//!
//! - `document`: the documents stage for one document's bytes: its decoded text, counts,
//!   hashes and front matter, or a reject with a reason.
//! - `frontmatter`: where YAML or TOML front matter is, at the very top of a text.
//! - `lines`: the line table of a text (lines end at "\r\n", "\r" or "\n").
//! - `fence`: where fenced code opens and closes, line by line.
//! - `mdx`: MDX segmentation: top-level ESM statements and JSX component blocks.
//! - `walk`: the top-level blocks of a line range, from one pass over pulldown-cmark's
//!   events.
//! - `kind`: block kinds, one ordered enum whose order is part of the schema.
//! - `blocks`: the blocks stage: a batch of documents -> block columns (code-point offsets,
//!   heading paths, content-derived block ids), over threads.
//! - `parsed`: a batch's blocks with what packing needs of them: token estimates, each
//!   document's language, the headings left to the reference inline parser.

pub mod blocks;
pub mod document;
pub mod fence;
pub mod frontmatter;
pub mod kind;
pub mod lines;
pub mod mdx;
pub mod parsed;
pub mod walk;

use crate::pyunicode::{is_blank, rstrip};
use fence::fenced_lines;
use kind::Kind;
use lines::{count_breaks, Lines};
use mdx::Segment;

/// Heading titles longer than this many code points are shortened.
pub const TITLE_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub kind: Kind,
    pub first: usize,
    pub last: usize,
    pub level: Option<u8>,
    pub title: Option<String>,
    pub info: Option<String>,
    pub alt: Option<String>,
    /// lists: the first line of each top-level item
    pub items: Option<Vec<usize>>,
    pub n_rows: Option<i32>,
}

impl Block {
    pub fn new(kind: Kind, first: usize, last: usize) -> Block {
        Block {
            kind,
            first,
            last,
            level: None,
            title: None,
            info: None,
            alt: None,
            items: None,
            n_rows: None,
        }
    }
}

/// The parser could not read a document the way the reference expects (an event it does
/// not handle): the caller parses it with the reference parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback(pub String);

/// Top-level blocks of `text` in order, with its line table.
pub fn parse(text: &str, markdown: bool, is_mdx: bool) -> Result<(Lines, Vec<Block>), Fallback> {
    let lines = Lines::of(text);
    if is_blank(text) {
        return Ok((lines, Vec::new()));
    }
    let found = if markdown {
        markdown_blocks(text, &lines, is_mdx)?
    } else {
        Vec::new()
    };
    let fenced = if !markdown && (text.contains("```") || text.contains("~~~")) {
        Some(fenced_lines((0..lines.len()).map(|i| lines.line(text, i))))
    } else {
        None
    };
    let blocks = fill_gaps(text, &lines, found, fenced.as_deref());
    Ok((lines, blocks))
}

fn markdown_blocks(text: &str, lines: &Lines, is_mdx: bool) -> Result<Vec<Block>, Fallback> {
    let mut blocks = Vec::new();
    let mut start = 0;
    if let Some((_, _, _, end)) = frontmatter::locate(text) {
        let last = count_breaks(&text[..end]);
        blocks.push(Block::new(Kind::FrontMatter, 0, last));
        start = last + 1;
    }
    if !is_mdx {
        blocks.extend(parse_md(text, lines, start, lines.len())?);
        return Ok(blocks);
    }
    let all: Vec<&str> = (0..lines.len()).map(|i| lines.line(text, i)).collect();
    let chars: Vec<usize> = all.iter().map(|l| char_len(l)).collect();
    for (kind, a, b) in mdx::segments(&all, &chars, start) {
        match kind {
            Segment::Md => blocks.extend(parse_md(text, lines, a, b)?),
            Segment::Esm => blocks.push(Block::new(Kind::MdxEsm, a, b - 1)),
            Segment::Jsx => blocks.push(Block::new(Kind::MdxJsx, a, b - 1)),
        }
    }
    Ok(blocks)
}

fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Blocks of lines [a, b), parsed as a document of their own; titles shortened.
fn parse_md(text: &str, lines: &Lines, a: usize, b: usize) -> Result<Vec<Block>, Fallback> {
    if a >= b {
        return Ok(Vec::new());
    }
    let mut blocks = walk::parse_lines(text, lines, a, b)?;
    for block in &mut blocks {
        if let Some(title) = &block.title {
            if char_len(title) > TITLE_CHARS {
                let cut: String = title.chars().take(TITLE_CHARS - 1).collect();
                block.title = Some(format!("{}…", rstrip(&cut)));
            }
        }
    }
    Ok(blocks)
}

/// Trim trailing blank lines off every block and turn uncovered text into paragraphs
/// (lines marked `fenced` never end a paragraph).
pub fn fill_gaps(
    text: &str,
    lines: &Lines,
    blocks: Vec<Block>,
    fenced: Option<&[bool]>,
) -> Vec<Block> {
    let (starts, ends) = (&lines.starts, &lines.ends);
    let n_lines = lines.len();
    let mut out = Vec::with_capacity(blocks.len());
    let mut nxt = 0;
    for mut block in blocks {
        let first = block.first;
        if nxt < first && (fenced.is_some() || !is_blank(&text[starts[nxt]..ends[first - 1]])) {
            gap_paragraphs(text, lines, nxt, first, fenced, &mut out);
        }
        let mut last = block.last;
        while last > first && is_blank(lines.line(text, last)) {
            last -= 1;
        }
        block.last = last;
        out.push(block);
        nxt = last + 1;
    }
    if nxt < n_lines {
        gap_paragraphs(text, lines, nxt, n_lines, fenced, &mut out);
    }
    out
}

/// Paragraphs of the non-blank runs of lines [nxt, until).
fn gap_paragraphs(
    text: &str,
    lines: &Lines,
    nxt: usize,
    until: usize,
    fenced: Option<&[bool]>,
    out: &mut Vec<Block>,
) {
    let mut run_start = None;
    for i in nxt..=until {
        let blank = i == until || (is_blank(lines.line(text, i)) && !fenced.is_some_and(|f| f[i]));
        match (blank, run_start) {
            (false, None) => run_start = Some(i),
            (true, Some(s)) => {
                out.push(Block::new(Kind::Paragraph, s, i - 1));
                run_start = None;
            }
            _ => {}
        }
    }
}
