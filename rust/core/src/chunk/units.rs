//! Units: whole blocks, or the pieces of blocks that alone exceed their section's budget,
//! and the arrays the packer reads of them.

use std::borrow::Cow;

use super::prepare::DocBlock;
use super::{Block, Counting, Doc, Failure};
use crate::chunk::pack;
use crate::chunk::section::{is_filler, leads};
use crate::chunk::split::{byte_offsets, char_offsets, split_block};
use crate::parse::blocks::short_hash;
use crate::parse::fence;
use crate::parse::kind::Kind;
use crate::pyunicode::rstrip;
use crate::tokens::counter::Counter;

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

/// The sizes units are cut to: per section its cap, the size split parts are grouped
/// toward, min_tokens, and the kind every block is split as (the strategy's: "text" for
/// recursive, "fixed" for fixed; None: each block's own kind).
pub struct Plan<'p> {
    pub cap: &'p [i64],
    pub target: i64,
    pub small: i64,
    pub text_kind: Option<&'static str>,
}

/// Kinds cut to keep their heading company even when they fit the cap alone (never atomic
/// kinds: a code block or table that fits is never cut).
fn cuttable(kind: Kind) -> bool {
    matches!(kind, Kind::Paragraph | Kind::List | Kind::Blockquote)
}

/// The counter of one kind's texts, as the splitter takes it.
struct KindCounter<'c, C: Counting> {
    code: bool,
    counting: &'c mut C,
}

impl<C: Counting> Counter for KindCounter<'_, C> {
    type Error = C::Error;
    fn count(&mut self, texts: &[&str]) -> Result<Vec<i64>, C::Error> {
        self.counting.count(self.code, texts)
    }
}

/// Whole blocks, or the pieces of blocks that alone exceed their section's cap.
///
/// A heading is never left alone (or with less than `small` tokens of content) because
/// the block after it did not fit with it: a block that must be cut and comes right after
/// a heading is cut with a budget that leaves room for them (see `leads`), and a
/// paragraph, list or quote that fits the cap alone but not with them is cut too, so its
/// first pieces go into one chunk with its heading.
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
        let unit = |key: String, text: String, spans, tokens, alt| Unit {
            pos,
            key,
            block_index: b.block_index,
            kept: b.pos,
            kind: b.kind,
            level: b.level,
            text,
            spans,
            tokens,
            section: sec,
            alt,
        };
        let mut count = KindCounter {
            code: b.kind.code_like(),
            counting,
        };
        if (b.tokens <= limit && !crowded) || captioned(b.kind, b.alt) {
            let (text, n) = closed(b.text, b.tokens, &mut count)?;
            let alt = match (b.kind, b.alt) {
                (Kind::Image, Some(alt)) if !alt.is_empty() => {
                    Some(alt_within(alt, limit, count.counting)?)
                }
                (_, alt) => alt.map(str::to_owned),
            };
            let spans = vec![(b.char_start, b.char_end)];
            out.push(unit(b.block_id.to_string(), text, spans, n, alt));
            continue;
        }
        let kind = plan.text_kind.unwrap_or(b.kind.name());
        let starts = byte_offsets(b.text, b.item_starts.unwrap_or_default());
        let pieces = split_block(kind, b.text, budget, plan.target, &mut count, &starts)
            .map_err(Failure::Count)?;
        let bounds: Vec<usize> = pieces.iter().flat_map(|p| [p.start, p.end]).collect();
        let bounds = char_offsets(b.text, &bounds);
        for (p, at) in pieces.into_iter().zip(bounds.chunks_exact(2)) {
            let (text, n) = closed(&p.text, p.tokens, &mut count)?;
            let key = format!("{}@{}", b.block_id, at[0]);
            let spans = vec![(b.char_start + at[0], b.char_start + at[1])];
            out.push(unit(key, text, spans, n, None));
        }
    }
    Ok(out)
}

/// `text` with a fence it leaves open closed, and its tokens (counted again when closed).
fn closed<C: Counter>(
    text: &str,
    tokens: i64,
    count: &mut C,
) -> Result<(String, i64), Failure<C::Error>> {
    match fence::closed(text) {
        Cow::Borrowed(same) => Ok((same.to_owned(), tokens)),
        Cow::Owned(done) => {
            let n = count.count_one(&done).map_err(Failure::Count)?;
            Ok((done, n))
        }
    }
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
        let n = counting
            .count(false, &[alt.as_str()])
            .map_err(Failure::Count)?[0];
        let n_chars = alt.chars().count();
        if n <= limit || n_chars <= 1 {
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

/// What the whitespace between two consecutive units, one of a `gapped` section, costs beyond
/// the packer's one-token separator, added to the unit after it. A chunk's text joins its
/// units with the text between them, which the separator stands for; a repack of a section
/// whose chunks counted over the cap takes it into account (50,000 blank lines between two
/// paragraphs are over a thousand cl100k tokens; deep indentation between list pieces, a
/// few per line).
pub fn add_gaps<C: Counting>(
    text: &str,
    units: &mut [Unit],
    gapped: &[bool],
    counting: &mut C,
) -> Result<(), Failure<C::Error>> {
    let mut at: Vec<(usize, usize, usize)> = Vec::new(); // unit, gap start, gap end
    for i in 1..units.len() {
        let (a, b) = (&units[i - 1], &units[i]);
        if !(gapped[a.section as usize] || gapped[b.section as usize]) {
            continue;
        }
        if let (Some(&(_, end)), Some(&(start, _))) = (a.spans.last(), b.spans.first()) {
            if start > end {
                at.push((i, end, start));
            }
        }
    }
    if at.is_empty() {
        return Ok(());
    }
    let points: Vec<i64> = at
        .iter()
        .flat_map(|&(_, s, e)| [s as i64, e as i64])
        .collect();
    let bytes = byte_offsets(text, &points);
    let gaps: Vec<&str> = bytes.chunks(2).map(|b| &text[b[0]..b[1]]).collect();
    let counts = counting.count(false, &gaps).map_err(Failure::Count)?;
    for (&(i, _, _), n) in at.iter().zip(counts) {
        units[i].tokens += (n - pack::SEP).max(0);
    }
    Ok(())
}

/// The unit arrays the packer reads.
pub fn pack_arrays(units: &[Unit]) -> pack::UnitArrays {
    let kinds = || units.iter().map(|u| u.kind);
    pack::UnitArrays {
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
        image: units
            .iter()
            .map(|u| captioned(u.kind, u.alt.as_deref()))
            .collect(),
        overlap_ok: kinds()
            .map(|k| !matches!(k, Kind::Heading | Kind::FrontMatter | Kind::Image))
            .collect(),
        filler: units.iter().map(filler).collect(),
    }
}

/// An image with an alt text: a chunk of its own, embedded as that text. An image without
/// one (or only spaces) would embed its breadcrumb alone: it stays in its section's text,
/// as written, source path included.
fn captioned(kind: Kind, alt: Option<&str>) -> bool {
    kind == Kind::Image && alt.is_some_and(|a| !a.trim().is_empty())
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

    /// One token per code point.
    struct Chars;

    impl Counting for Chars {
        type Error = std::convert::Infallible;
        fn count(&mut self, _code: bool, texts: &[&str]) -> Result<Vec<i64>, Self::Error> {
            Ok(texts.iter().map(|t| t.chars().count() as i64).collect())
        }
        fn added(&self) -> i64 {
            0
        }
        fn is_estimate(&self) -> bool {
            false
        }
    }

    fn block(kind: Kind, text: &str, char_start: usize) -> DocBlock<'_> {
        DocBlock {
            block: Block {
                block_index: 0,
                block_id: Cow::Borrowed("b"),
                kind,
                level: None,
                text,
                char_start,
                char_end: char_start + text.chars().count(),
                line_start: 1,
                alt: None,
                item_starts: None,
                tokens: text.chars().count() as i64,
                plain: None,
                image_src: None,
            },
            path: 0,
            pos: Some(0),
        }
    }

    fn units(blocks: &[DocBlock], cap: i64) -> Vec<Unit> {
        let plan = Plan {
            cap: &[cap],
            target: cap,
            small: 0,
            text_kind: None,
        };
        let numbers = vec![0; blocks.len()];
        units_of(blocks, &numbers, &plan, &mut Chars).unwrap()
    }

    #[test]
    fn slices_and_open_fences() {
        assert_eq!(char_slice("héllo", 1, 3), "él");
        assert_eq!(char_slice("ab", 2, 9), "");
    }

    #[test]
    fn pieces_are_keyed_and_placed_in_code_points() {
        let got = units(&[block(Kind::Paragraph, "Éé un. Deux trois.", 5)], 12);
        let keys: Vec<&str> = got.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["b@0", "b@7"]);
        assert_eq!(got[1].text, "Deux trois.");
        assert_eq!(got[1].spans, vec![(12, 23)]);
    }

    #[test]
    fn open_fences_are_closed_and_counted_again() {
        let got = units(&[block(Kind::Code, "```\nx", 0)], 100);
        assert_eq!((got[0].text.as_str(), got[0].tokens), ("```\nx\n```", 9));
        let lines: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
        let text = format!("~~~\n{}", lines.join("\n"));
        for u in units(&[block(Kind::Code, &text, 0)], 40) {
            assert!(u.text.ends_with("\n~~~") && u.tokens <= 40, "{}", u.text);
        }
    }
}
