//! The chunk rows of a document's groups: context prefixes and anchors, texts, spans,
//! lines and ids (crate::chunk::assemble), embed_text, n_tokens, and the columns that say
//! where a chunk sits.

use super::embed;
use super::prepare::{Context, DocBlock};
use super::room::strs;
use super::units::Unit;
use super::{Counting, Doc, Failure, Policy};
use crate::chunk::assemble::{self, IdParts};
use crate::chunk::context::{clip, header_line, path_stem, url};
use crate::chunk::pack::{Group, SEP};
use crate::parse::kind::Kind;
use crate::pyunicode::casefold;

/// A section: the level and title of its heading and the heading's anchor (all None for
/// a preamble).
pub struct Section {
    pub level: Option<u8>,
    pub title: Option<String>,
    pub anchor: Option<String>,
}

impl Section {
    pub fn of(heading: Option<&DocBlock>, ctx: &Context) -> Section {
        let Some(b) = heading else {
            return Section {
                level: None,
                title: None,
                anchor: None,
            };
        };
        Section {
            level: b.level,
            title: ctx.paths[b.path].last().cloned(),
            anchor: b.pos.and_then(|p| ctx.anchors[p].clone()),
        }
    }
}

/// One document's packing.
pub struct Packed<'p> {
    pub units: &'p [Unit],
    pub groups: &'p [Group],
    pub sections: &'p [Section],
    pub strategy: &'static str,
}

/// One chunk row (the columns that vary by chunk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub chunk_id: String,
    pub chunk_type: &'static str,
    pub name: String,
    pub breadcrumb: Vec<String>,
    pub header_level: Option<u8>,
    pub section_title: Option<String>,
    pub anchor: Option<String>,
    pub url: Option<String>,
    pub headings: Vec<String>,
    pub text: String,
    pub embed_text: String,
    pub embed_hash: String,
    pub image_src: Option<String>,
    pub n_tokens: i64,
    pub overlap_tokens: i64,
    pub block_start: i64,
    pub block_end: i64,
    pub block_ids: Vec<String>,
    pub spans: Vec<(usize, usize)>,
    pub is_slice: bool,
    pub line_start: usize,
    pub line_end: usize,
    pub part: usize,
    pub parts: usize,
}

/// The rows of a document's groups, n_tokens counted.
#[allow(clippy::too_many_arguments)]
pub fn rows<C: Counting>(
    doc: &Doc,
    blocks: &[DocBlock],
    packed: &Packed,
    ctx: &Context,
    policy: &Policy,
    limits: &[Option<usize>],
    counting: &mut C,
) -> Result<Vec<Row>, Failure<C::Error>> {
    let (units, groups) = (packed.units, packed.groups);
    let path = |u: &Unit| &ctx.paths[blocks[u.pos].path];
    let first_text = groups.iter().position(|g| !g.image);
    let mut prefixes = Vec::with_capacity(groups.len());
    let mut anchors = Vec::with_capacity(groups.len());
    for (j, g) in groups.iter().enumerate() {
        let first = &units[g.units[0]];
        let head = header(first, path(first), ctx);
        let fields: &[String] = if Some(j) == first_text {
            &ctx.fields
        } else {
            &[]
        };
        let prefix = std::iter::once(&head)
            .chain(fields)
            .filter(|l| !l.is_empty())
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        prefixes.push(match limits[g.section] {
            Some(limit) => clip(&prefix, limit),
            None => prefix,
        });
        anchors.push(packed.sections[first.section as usize].anchor.as_deref());
    }
    let images: Vec<Option<&str>> = groups
        .iter()
        .map(|g| {
            g.image
                .then(|| units[g.units[0]].alt.as_deref().unwrap_or(""))
        })
        .collect();
    let chunks = assembled(doc, units, groups, &prefixes, &anchors, &images, policy)?;
    let stem = path_stem(doc.path);
    let has_headings = packed.sections.iter().any(|s| s.level.is_some());
    let parts = section_parts(groups, packed.sections.len());
    let mut rows = Vec::with_capacity(groups.len());
    for (j, (g, chunk)) in groups.iter().zip(chunks).enumerate() {
        let us: Vec<&Unit> = g.units.iter().map(|&k| &units[k]).collect();
        let section = &packed.sections[g.section];
        let kept = match g.image {
            true => chunk.body.clone(),
            false => embed::body(&chunk.body, &us, ctx),
        };
        let embed_text = match prefixes[j].is_empty() {
            true => kept,
            false => format!("{}\n\n{kept}", prefixes[j]),
        };
        let first_content = us
            .iter()
            .find(|u| u.kind != Kind::Heading)
            .unwrap_or(&us[us.len() - 1]);
        let link = match policy.link_template.is_empty() {
            true => None,
            false => Some(
                url(
                    policy.link_template,
                    doc.path,
                    anchors[j],
                    chunk.line_start as i64,
                    chunk.line_end as i64,
                )
                .map_err(|e| Failure::Internal(format!("ValueError: {e}")))?,
            ),
        };
        let (part, of) = parts[j];
        rows.push(Row {
            chunk_id: chunk.chunk_id,
            chunk_type: chunk_type(g, section, packed.strategy, has_headings),
            name: section.title.clone().unwrap_or_else(|| stem.to_owned()),
            breadcrumb: path(first_content).clone(),
            header_level: section.level,
            section_title: section.title.clone(),
            anchor: anchors[j].map(str::to_owned),
            url: link,
            headings: us
                .iter()
                .filter(|u| u.kind == Kind::Heading)
                .map(|u| path(u).last().cloned().unwrap_or_default())
                .collect(),
            embed_hash: assemble::embed_hash(&embed_text),
            text: chunk.body,
            embed_text,
            image_src: match g.image {
                true => blocks[us[0].pos].image_src.map(str::to_owned),
                false => None,
            },
            n_tokens: 0,
            overlap_tokens: chunk.overlap_tokens,
            block_start: chunk.block_start,
            block_end: chunk.block_end,
            block_ids: us.iter().map(|u| u.key.clone()).collect(),
            spans: chunk.spans,
            is_slice: chunk.is_slice,
            line_start: chunk.line_start,
            line_end: chunk.line_end,
            part,
            parts: of,
        });
    }
    count(&mut rows, &prefixes, groups, counting)?;
    Ok(rows)
}

/// The context line of a chunk that starts with unit `first`: the title and the headings
/// above where it starts, less the heading it starts with.
fn header(first: &Unit, path: &[String], ctx: &Context) -> String {
    if !ctx.on {
        return String::new();
    }
    let heading = first.kind == Kind::Heading;
    let above = match heading {
        true => &path[..path.len().saturating_sub(1)],
        false => path,
    };
    let line = header_line(&ctx.title, &strs(above));
    if heading
        && path
            .last()
            .is_some_and(|own| casefold(&line) == casefold(own))
    {
        return String::new(); // the chunk opens with the title itself
    }
    line
}

#[allow(clippy::too_many_arguments)]
fn assembled<E>(
    doc: &Doc,
    units: &[Unit],
    groups: &[Group],
    prefixes: &[String],
    anchors: &[Option<&str>],
    images: &[Option<&str>],
    policy: &Policy,
) -> Result<Vec<assemble::Chunk>, Failure<E>> {
    let keys: Vec<&str> = units.iter().map(|u| u.key.as_str()).collect();
    let texts: Vec<&str> = units.iter().map(|u| u.text.as_str()).collect();
    let spans: Vec<(usize, usize)> = units.iter().flat_map(|u| u.spans.iter().copied()).collect();
    let mut span_starts = vec![0];
    for u in units {
        span_starts.push(span_starts[span_starts.len() - 1] + u.spans.len());
    }
    let tokens: Vec<i64> = units.iter().map(|u| u.tokens).collect();
    let block_index: Vec<i64> = units.iter().map(|u| u.block_index).collect();
    let au = assemble::Units {
        text: doc.text,
        keys: &keys,
        texts: &texts,
        spans: &spans,
        span_starts: &span_starts,
        tokens: &tokens,
        block_index: &block_index,
    };
    let ag: Vec<assemble::Group> = groups
        .iter()
        .enumerate()
        .map(|(j, g)| assemble::Group {
            units: &g.units,
            overlap: g.overlap,
            prefix: &prefixes[j],
            anchor: anchors[j],
            image_body: images[j],
        })
        .collect();
    let ids = IdParts {
        doc_id: doc.doc_id,
        chunker_version: policy.chunker_version,
        id_hash: policy.id_hash,
    };
    assemble::assemble(&au, &ag, &ids).map_err(Failure::Internal)
}

fn chunk_type(g: &Group, section: &Section, strategy: &str, has_headings: bool) -> &'static str {
    if g.image {
        "image"
    } else if strategy != "markdown" || !has_headings {
        "text"
    } else if section.level.is_some() {
        "section"
    } else {
        "preamble"
    }
}

/// 1-based part number and part count of every text group within its section ((1, 1)
/// for an image).
fn section_parts(groups: &[Group], n_sections: usize) -> Vec<(usize, usize)> {
    let mut total = vec![0usize; n_sections];
    for g in groups.iter().filter(|g| !g.image) {
        total[g.section] += 1;
    }
    let mut seen = vec![0usize; n_sections];
    groups
        .iter()
        .map(|g| match g.image {
            true => (1, 1),
            false => {
                seen[g.section] += 1;
                (seen[g.section], total[g.section])
            }
        })
        .collect()
}

/// n_tokens of every embed_text: exact with a real tokenizer; with the estimate, the
/// units' tokens, the context prefix and the blank line after it (an image chunk counts
/// its alt text).
fn count<C: Counting>(
    rows: &mut [Row],
    prefixes: &[String],
    groups: &[Group],
    counting: &mut C,
) -> Result<(), Failure<C::Error>> {
    if counting.is_estimate() {
        let with_blank: Vec<String> = prefixes
            .iter()
            .map(|p| {
                if p.is_empty() {
                    String::new()
                } else {
                    format!("{p}\n\n")
                }
            })
            .collect();
        let extra = counting
            .count(false, &strs(&with_blank))
            .map_err(Failure::Count)?;
        for ((r, g), (p, e)) in rows.iter_mut().zip(groups).zip(prefixes.iter().zip(extra)) {
            let body = match g.image {
                true => counting
                    .count(false, &[r.text.as_str()])
                    .map_err(Failure::Count)?[0],
                false => g.tokens,
            };
            r.n_tokens = body + if p.is_empty() { 0 } else { e + SEP };
        }
    } else {
        let texts: Vec<&str> = rows.iter().map(|r| r.embed_text.as_str()).collect();
        let counted = counting.count_inputs(&texts).map_err(Failure::Count)?;
        for (r, n) in rows.iter_mut().zip(counted) {
            r.n_tokens = n;
        }
    }
    Ok(())
}
