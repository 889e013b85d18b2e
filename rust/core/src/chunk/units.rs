//! Units: whole blocks, or the pieces of blocks that alone exceed their section's budget
//! (section.py's `units_of`), and the arrays the packer reads of them.

use std::borrow::Cow;

use super::prepare::DocBlock;
use super::{Block, Counting, Doc, Failure};
use crate::blocks::short_hash;
use crate::fence::{closes_fence, opens_fence};
use crate::kind::Kind;
use crate::pack;
use crate::pyunicode::rstrip;
use crate::section::{is_filler, leads};

/// One unit: a whole block (`pos` in the document's blocks) or a piece of one.
pub struct Unit {
    pub pos: usize,
    /// block_id, or block_id@offset for a piece of a block
    pub key: String,
    pub block_index: i64,
    /// the block's position among the kept blocks (None: the fixed strategy's body)
    pub kept: Option<usize>,
    pub kind: Kind,
    pub level: Option<u8>,
    pub text: String,
    /// code points of the document, end-exclusive
    pub spans: Vec<(usize, usize)>,
    pub tokens: i64,
    pub section: u32,
    pub alt: Option<String>,
}

/// The sizes units are cut to: per section its cap, and min_tokens.
pub struct Plan<'p> {
    pub cap: &'p [i64],
    pub small: i64,
}

/// Kinds cut to keep their heading company even when they fit the cap alone.
fn cuttable(kind: Kind) -> bool {
    matches!(kind, Kind::Paragraph | Kind::List | Kind::Blockquote)
}

/// Whole blocks, or the pieces of blocks that alone exceed their section's cap. A heading
/// is never left alone because the block after it did not fit with it (see `leads`).
pub fn units_of<C: Counting>(
    blocks: &[DocBlock],
    numbers: &[u32],
    plan: &Plan,
    counting: &mut C,
) -> Result<Vec<Unit>, Failure<C::Error>> {
    let heading: Vec<bool> = blocks.iter().map(|b| b.kind == Kind::Heading).collect();
    let tokens: Vec<i64> = blocks.iter().map(|b| b.tokens).collect();
    let rooms = leads(&heading, numbers, &tokens, plan.small);
    let mut out = Vec::with_capacity(blocks.len());
    for (pos, ((b, &sec), &room)) in blocks.iter().zip(numbers).zip(&rooms).enumerate() {
        let limit = plan.cap[sec as usize];
        let budget = (limit - room).max(limit.div_euclid(2));
        let crowded = room != 0 && cuttable(b.kind) && b.tokens > budget;
        if !((b.tokens <= limit && !crowded) || b.kind == Kind::Image) {
            return Err(Failure::Declined("a block to split"));
        }
        // a block to split, or a fence to close (and count again), is left to the caller
        if open_fence(b.text) {
            return Err(Failure::Declined("an open fence"));
        }
        let (text, n) = (b.text.to_owned(), b.tokens);
        let alt = match (b.kind, b.alt) {
            (Kind::Image, Some(alt)) if !alt.is_empty() => Some(alt_within(alt, limit, counting)?),
            (_, alt) => alt.map(str::to_owned),
        };
        out.push(Unit {
            pos,
            key: b.block_id.to_string(),
            block_index: b.block_index,
            kept: b.pos,
            kind: b.kind,
            level: b.level,
            text,
            spans: vec![(b.char_start, b.char_end)],
            tokens: n,
            section: sec,
            alt,
        });
    }
    Ok(out)
}

/// Whether `text` opens a fence that it does not close.
fn open_fence(text: &str) -> bool {
    if !text.contains("```") && !text.contains("~~~") {
        return false;
    }
    let mut fence: Option<&str> = None;
    for line in text.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
        if !line.contains("```") && !line.contains("~~~") {
            continue;
        }
        match fence {
            None => fence = opens_fence(line),
            Some(f) if closes_fence(line, f) => fence = None,
            Some(_) => {}
        }
    }
    fence.is_some()
}

/// An image's alt text, cut at a space (and marked with "…") until it counts at most
/// `limit` tokens.
fn alt_within<C: Counting>(
    alt: &str,
    limit: i64,
    counting: &mut C,
) -> Result<String, Failure<C::Error>> {
    let mut alt = alt.to_owned();
    loop {
        let n_chars = alt.chars().count();
        if n_chars <= 1
            || counting
                .count(false, &[alt.as_str()])
                .map_err(Failure::Count)?[0]
                <= limit
        {
            return Ok(alt);
        }
        let keep = (n_chars * 3 / 4).max(1);
        let end = alt.char_indices().nth(keep).map_or(alt.len(), |(i, _)| i);
        let cut = &alt[..end];
        let kept = match cut.rfind(' ') {
            Some(space) if space > 0 => &cut[..space],
            _ => cut,
        };
        alt = format!("{}…", rstrip(kept));
    }
}

/// The fixed strategy ignores structure: one pseudo-block from the first block to the last.
pub fn whole_body<'a, C: Counting>(
    doc: &Doc<'a>,
    blocks: &[DocBlock<'a>],
    counting: &mut C,
) -> Result<DocBlock<'a>, Failure<C::Error>> {
    let (first, last) = (&blocks[0], &blocks[blocks.len() - 1]);
    let body = char_slice(doc.text, first.char_start, last.char_end);
    let key = short_hash(body.as_bytes(), 16);
    let tokens = counting.count(false, &[body]).map_err(Failure::Count)?[0];
    Ok(DocBlock {
        block: Block {
            block_index: 0,
            block_id: Cow::Owned(format!("fixed-{key}")),
            kind: Kind::Paragraph,
            level: None,
            text: body,
            char_start: first.char_start,
            char_end: last.char_end,
            line_start: first.line_start,
            alt: None,
            item_starts: None,
            tokens,
            plain: None,
            image_src: None,
        },
        path: 0,
        pos: None,
    })
}

/// `text[start:end]` in code points (Python's slice: bounds clamped, empty when reversed).
pub fn char_slice(text: &str, start: usize, end: usize) -> &str {
    let at = |k: usize| text.char_indices().nth(k).map_or(text.len(), |(i, _)| i);
    let (a, b) = (at(start), at(end));
    if a >= b {
        ""
    } else {
        &text[a..b]
    }
}

/// The unit arrays the packer reads.
pub struct PackArrays {
    tokens: Vec<i64>,
    section: Vec<usize>,
    heading: Vec<bool>,
    atomic: Vec<bool>,
    image: Vec<bool>,
    overlap_ok: Vec<bool>,
    filler: Vec<bool>,
}

impl PackArrays {
    pub fn of(units: &[Unit]) -> PackArrays {
        let kinds = || units.iter().map(|u| u.kind);
        PackArrays {
            tokens: units.iter().map(|u| u.tokens).collect(),
            section: units.iter().map(|u| u.section as usize).collect(),
            heading: kinds().map(|k| k == Kind::Heading).collect(),
            atomic: kinds()
                .map(|k| {
                    matches!(
                        k,
                        Kind::Code | Kind::Table | Kind::Html | Kind::MdxJsx | Kind::MdxEsm
                    )
                })
                .collect(),
            image: kinds().map(|k| k == Kind::Image).collect(),
            overlap_ok: kinds()
                .map(|k| !matches!(k, Kind::Heading | Kind::FrontMatter | Kind::Image))
                .collect(),
            filler: units.iter().map(filler).collect(),
        }
    }

    pub fn units(&self) -> pack::Units<'_> {
        pack::Units {
            tokens: &self.tokens,
            section: &self.section,
            heading: &self.heading,
            atomic: &self.atomic,
            image: &self.image,
            overlap_ok: &self.overlap_ok,
            filler: &self.filler,
        }
    }
}

/// Says nothing alone: a heading, or link reference definitions or comments only.
fn filler(u: &Unit) -> bool {
    let paragraph = u.kind == Kind::Paragraph;
    let t = &u.text;
    let may = t.contains("<!--") || t.contains("{/*") || (paragraph && t.contains("]:"));
    u.kind == Kind::Heading || (may && is_filler(paragraph, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_open_fences() {
        assert_eq!(char_slice("héllo", 1, 3), "él");
        assert_eq!(char_slice("ab", 2, 9), "");
        assert!(open_fence("```py\nx = 1"));
        assert!(!open_fence("```py\nx = 1\r\n```"));
        assert!(!open_fence("a ``` b"));
    }
}
