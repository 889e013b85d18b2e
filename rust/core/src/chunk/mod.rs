//! From a document's blocks to its chunks. `chunk_document`, here, is the chunks stage for
//! one document whose blocks are known: the strategy, heading paths and anchors, the title,
//! the room each section leaves beside its context header, units, packing, and the chunk
//! rows, over plain Rust structures.
//!
//! With a real tokenizer a section whose chunks count over the cap is packed again with a
//! tighter budget (`MAX_REPACKS` attempts; after half of them the squeeze doubles, down to
//! units of `FLOOR` tokens) and the whitespace between its units counted (`add_gaps`), so
//! the cap holds exactly.
//!
//! - `heading`: heading text as readers see it (ids, template tags and closing `#`s
//!   removed), GitHub anchors, titles.
//! - `context`: what a chunk says of where it comes from: the context header, the file-stem
//!   title, the url from a link template.
//! - `section`: sections of a document's blocks, the leads that keep a heading with its
//!   first content, the blocks that say nothing alone.
//! - `split`: one oversized block cut into pieces by kind, the only place that knows how to
//!   cut markdown.
//! - `pack`: the packer: units grouped into chunks from small integer arrays, never text.
//! - `assemble`: a chunk's text, spans, lines and ids from its units.
//! - `prepare`: a document's context: clean heading texts, heading paths, anchors, title.
//! - `room`: the room each section leaves for text beside its longest context header.
//! - `units`: whole blocks, or the pieces of those over their section's budget, and the
//!   arrays the packer reads of them.
//! - `rows`: the chunk rows of a document's packed groups.
//! - `embed`: what embed_text holds of a chunk's text.

pub mod assemble;
pub mod context;
mod embed;
pub mod heading;
pub mod pack;
mod prepare;
mod room;
mod rows;
pub mod section;
pub mod split;
mod units;

use std::borrow::Cow;

use crate::parse::kind::Kind;
use pack::{Limits, Parent};

pub use rows::Row;

pub const MAX_REPACKS: usize = 16;
/// The smallest budget a repack squeezes a unit to, in tokens.
pub const FLOOR: i64 = 8;

/// Token counts of one document's texts: `code` picks the counter of code-like kinds (the
/// estimate's code weights; a real tokenizer counts every kind alike).
pub trait Counting {
    type Error;
    fn count(&mut self, code: bool, texts: &[&str]) -> Result<Vec<i64>, Self::Error>;
    /// Tokens the model adds around every input ([CLS], [SEP]).
    fn added(&self) -> i64;
    /// Whether this is the estimate (n_tokens is then a sum, not a count of embed_text).
    fn is_estimate(&self) -> bool;
    /// What the model reads of whole inputs (embed_texts): their tokens and those it adds
    /// around each. `count` of the pieces of an input plus `added` may exceed it (several
    /// models at once count each piece by the one that reads the most of it), never fall
    /// short of it.
    fn count_inputs(&mut self, texts: &[&str]) -> Result<Vec<i64>, Self::Error> {
        let added = self.added();
        Ok(self
            .count(false, texts)?
            .into_iter()
            .map(|n| n + added)
            .collect())
    }
}

/// Every policy value the chunks of a document depend on.
pub struct Policy<'a> {
    /// auto, markdown, recursive or fixed
    pub strategy: &'a str,
    /// front_matter is not `include`: front matter blocks are left out
    pub drop_front_matter: bool,
    pub heading_depth: u8,
    pub pack_siblings: bool,
    pub target: i64,
    pub max: i64,
    pub min: i64,
    pub overlap: i64,
    /// breadcrumb_prefix: a context header in embed_text
    pub context: bool,
    pub link_template: &'a str,
    pub id_hash: &'a str,
    pub chunker_version: &'a str,
}

/// A document and what was prepared for it beside its blocks: the title its front matter
/// gives (None: none) and its first chunk's `key: value` lines.
pub struct Doc<'a> {
    pub doc_id: &'a str,
    pub path: &'a str,
    pub text: &'a str,
    pub plain_text: bool,
    pub front_matter_title: Option<&'a str>,
    pub fields: Vec<&'a str>,
}

/// A block of the document. `plain`: for a heading whose text has inline markup, its text
/// as the reference inline parser reduces it; `image_src`: an image block's source.
#[derive(Clone)]
pub struct Block<'a> {
    pub block_index: i64,
    pub block_id: Cow<'a, str>,
    pub kind: Kind,
    pub level: Option<u8>,
    pub text: &'a str,
    pub char_start: usize,
    pub char_end: usize,
    pub line_start: i64,
    pub alt: Option<&'a str>,
    pub item_starts: Option<&'a [i64]>,
    pub tokens: i64,
    pub plain: Option<&'a str>,
    pub image_src: Option<&'a str>,
}

/// Why a document gives no chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure<E> {
    /// Some chunk stays over max_tokens after every repack (the detail for people).
    OverCap(String),
    /// A value no chunk can be made with (a bug in chunkmill).
    Internal(String),
    /// The counter failed.
    Count(E),
}

/// The chunks of one document: its rows, the strategy that made them and its title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocChunks {
    pub rows: Vec<Row>,
    pub strategy: &'static str,
    pub title: String,
}

/// The chunk rows of one document (none when every block is left out).
pub fn chunk_document<'a, C: Counting>(
    doc: &Doc<'a>,
    blocks: &[Block<'a>],
    policy: &Policy,
    counting: &mut C,
) -> Result<DocChunks, Failure<C::Error>> {
    let strategy = pick_strategy(doc, blocks, policy);
    let kept: Vec<Block> = blocks
        .iter()
        .filter(|b| !(policy.drop_front_matter && b.kind == Kind::FrontMatter))
        .cloned()
        .collect();
    if kept.is_empty() {
        let title = String::new();
        return Ok(DocChunks {
            rows: Vec::new(),
            strategy,
            title,
        });
    }
    let ctx = prepare::prepare(doc, &kept, policy);
    let mut doc_blocks = prepare::with_paths(&kept, &ctx);
    if strategy == "fixed" {
        doc_blocks = vec![units::whole_body(doc, &doc_blocks, counting)?];
    }
    let rows = packed_rows(doc, &doc_blocks, &ctx, policy, strategy, counting)?;
    Ok(DocChunks {
        rows,
        strategy,
        title: ctx.title,
    })
}

/// The strategy of a document: the policy's, or for `auto` recursive for plain text,
/// markdown with a heading, else sentence.
pub fn pick_strategy<'p>(doc: &Doc, blocks: &[Block], policy: &Policy<'p>) -> &'static str {
    match policy.strategy {
        "markdown" => "markdown",
        "recursive" => "recursive",
        "fixed" => "fixed",
        _ if doc.plain_text => "recursive",
        _ if blocks.iter().any(|b| b.kind == Kind::Heading) => "markdown",
        _ => "sentence",
    }
}

fn packed_rows<C: Counting>(
    doc: &Doc,
    blocks: &[prepare::DocBlock],
    ctx: &prepare::Context,
    policy: &Policy,
    strategy: &'static str,
    counting: &mut C,
) -> Result<Vec<Row>, Failure<C::Error>> {
    let markdown = strategy == "markdown";
    let heading: Vec<bool> = blocks.iter().map(|b| b.kind == Kind::Heading).collect();
    let levels: Vec<u8> = blocks.iter().map(|b| b.level.unwrap_or(0)).collect();
    let depth = markdown.then_some(policy.heading_depth);
    let (numbers, openers) = section::sections(&heading, &levels, depth);
    let sections: Vec<rows::Section> = openers
        .iter()
        .map(|o| rows::Section::of(o.map(|at| &blocks[at]), ctx))
        .collect();
    let (cap, limits) = room::header_room(blocks, &numbers, ctx, policy, counting)?;
    let levels: Vec<Option<u8>> = sections.iter().map(|s| s.level).collect();
    let parents: Option<Vec<Option<Parent>>> =
        (policy.pack_siblings && markdown).then(|| section::parents(&levels));
    let text_kind = match strategy {
        "recursive" => Some("text"),
        "fixed" => Some("fixed"),
        _ => None,
    };
    let mut shrink = vec![0i64; cap.len()];
    let mut over: Vec<Option<i64>> = vec![None; cap.len()];
    let mut gapped = vec![false; cap.len()];
    for attempt in 0..MAX_REPACKS {
        let tight: Vec<i64> = cap
            .iter()
            .zip(&shrink)
            .map(|(&c, &s)| (c - s).max(FLOOR))
            .collect();
        let plan = units::Plan {
            cap: &tight,
            target: policy.target,
            small: policy.min,
            text_kind,
        };
        let mut us = units::units_of(blocks, &numbers, &plan, counting)?;
        if gapped.iter().any(|&g| g) {
            units::add_gaps(doc.text, &mut us, &gapped, counting)?;
        }
        let arrays = units::pack_arrays(&us);
        let lim = Limits {
            cap: &tight,
            target: policy.target,
            min_tokens: policy.min,
            overlap: policy.overlap,
        };
        let u = arrays.units();
        pack::check(&u, &lim, parents.as_deref()).map_err(Failure::Internal)?;
        let groups = pack::pack(&u, &lim, parents.as_deref());
        let packed = rows::Packed {
            units: &us,
            groups: &groups,
            sections: &sections,
            strategy,
        };
        let rows = rows::rows(doc, blocks, &packed, ctx, policy, &limits, counting)?;
        over.iter_mut().for_each(|o| *o = None);
        for (row, g) in rows.iter().zip(&groups) {
            if row.n_tokens > policy.max {
                let excess = row.n_tokens - policy.max;
                let o = &mut over[g.section];
                *o = Some(o.map_or(excess, |x| x.max(excess)));
            }
        }
        if over.iter().all(Option::is_none) {
            return Ok(rows);
        }
        for (sec, excess) in over.iter().enumerate() {
            if let Some(excess) = excess {
                gapped[sec] = true;
                shrink[sec] += (*excess).max(policy.max.div_euclid(20));
                if attempt >= MAX_REPACKS / 2 {
                    shrink[sec] *= 2;
                }
            }
        }
    }
    let largest = over.iter().flatten().max().copied().unwrap_or(0);
    Err(Failure::OverCap(format!(
        "could not fit every chunk within {} tokens after {MAX_REPACKS} attempts (largest over by {largest})",
        policy.max
    )))
}
