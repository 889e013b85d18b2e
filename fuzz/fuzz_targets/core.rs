//! Any text through every stage of the core that a document goes through (blocks, their
//! estimates, sections, leads and fillers, splitting blocks to a small budget, heading
//! texts and anchors, context lines and urls, packing whole blocks, assembly, postings):
//! no input may
//! panic (a panic would become a reject; here it is a finding). The first byte picks the
//! format (markdown, MDX, plain text) so that every path is reached.
#![no_main]

use chunkmill_core::chunk::assemble::{self, IdParts};
use chunkmill_core::chunk::context;
use chunkmill_core::chunk::heading;
use chunkmill_core::chunk::pack::{self, Limits};
use chunkmill_core::chunk::section;
use chunkmill_core::chunk::split::{byte_offsets, split_block};
use chunkmill_core::parse::blocks::{blocks, Document};
use chunkmill_core::parse::kind::Kind;
use chunkmill_core::postings;
use chunkmill_core::tokens::counter::Estimate;
use chunkmill_core::tokens::estimate::estimates;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let doc = Document {
        text: &text,
        markdown: mode % 3 != 2,
        mdx: mode % 3 == 1,
    };
    let cols = blocks(&[doc]);
    let texts: Vec<&str> = cols
        .byte_start
        .iter()
        .zip(&cols.byte_end)
        .map(|(&a, &b)| &text[a..b])
        .collect();
    let code: Vec<bool> = cols
        .kind
        .iter()
        .map(|k| matches!(k, Kind::Code | Kind::MdxEsm | Kind::MdxJsx))
        .collect();
    let group = vec![0u32; texts.len()];
    let (_, tokens) = estimates(&texts, &code, &group, "balanced").expect("a known bias");
    let heading: Vec<bool> = cols.kind.iter().map(|&k| k == Kind::Heading).collect();
    let levels: Vec<u8> = cols.level.iter().map(|l| l.unwrap_or(0) as u8).collect();
    let (numbers, _) = section::sections(&heading, &levels, Some(3));
    let tokens: Vec<i64> = tokens.into_iter().map(i64::from).collect();
    section::leads(&heading, &numbers, &tokens, 40);
    let filler: Vec<bool> = texts
        .iter()
        .zip(&cols.kind)
        .map(|(t, &k)| k == Kind::Heading || section::is_filler(k == Kind::Paragraph, t))
        .collect();
    split_and_name(&texts, &cols.kind, &cols.item_starts, &tokens);
    let kinds = &cols.kind;
    let is = |f: fn(Kind) -> bool| -> Vec<bool> { kinds.iter().map(|&k| f(k)).collect() };
    let atomic = is(|k| {
        matches!(
            k,
            Kind::Code | Kind::Table | Kind::Html | Kind::MdxJsx | Kind::MdxEsm
        )
    });
    let image = is(|k| k == Kind::Image);
    let overlap_ok = is(|k| !matches!(k, Kind::Heading | Kind::FrontMatter | Kind::Image));
    let section: Vec<usize> = numbers.iter().map(|&n| n as usize).collect();
    let cap = vec![512i64; section.last().map_or(0, |&s| s + 1)];
    let units = pack::Units {
        tokens: &tokens,
        section: &section,
        heading: &heading,
        atomic: &atomic,
        image: &image,
        overlap_ok: &overlap_ok,
        filler: &filler,
    };
    let limits = Limits {
        cap: &cap,
        target: 400,
        min_tokens: 40,
        overlap: 50,
    };
    let groups = pack::pack(&units, &limits, None);
    let keys: Vec<&str> = cols.block_id.iter().map(String::as_str).collect();
    let spans: Vec<(usize, usize)> = cols
        .char_start
        .iter()
        .zip(&cols.char_end)
        .map(|(&a, &b)| (a as usize, b as usize))
        .collect();
    let span_starts: Vec<usize> = (0..=spans.len()).collect();
    let block_index: Vec<i64> = cols.block_index.iter().map(|&i| i64::from(i)).collect();
    let units = assemble::Units {
        text: &text,
        keys: &keys,
        texts: &texts,
        spans: &spans,
        span_starts: &span_starts,
        tokens: &tokens,
        block_index: &block_index,
    };
    let groups: Vec<assemble::Group> = groups
        .iter()
        .map(|g| assemble::Group {
            units: &g.units,
            overlap: g.overlap,
            prefix: "Title > Section",
            anchor: Some("section"),
            image_body: g.image.then_some("alt"),
        })
        .collect();
    let ids = IdParts {
        doc_id: "0123456789abcdef",
        chunker_version: "mdchunk-6",
        id_hash: "0",
    };
    let chunks =
        assemble::assemble(&units, &groups, &ids).expect("units the packer placed assemble");
    postings::postings(chunks.iter().map(|c| c.body.as_str()));
});

/// Every block over a small budget split as the chunk stage splits it; every heading
/// cleaned, titled and anchored; a context line and a url of each.
fn split_and_name(texts: &[&str], kinds: &[Kind], items: &[Option<Vec<i32>>], tokens: &[i64]) {
    let mut count = Estimate::new("balanced", false, None).expect("a known bias");
    for (((text, kind), items), &n) in texts.iter().zip(kinds).zip(items).zip(tokens) {
        if n > 24 {
            let starts: Vec<i64> = items.iter().flatten().map(|&i| i64::from(i)).collect();
            let starts = byte_offsets(text, &starts);
            let _ = split_block(kind.name(), text, 24, 40, &mut count, &starts);
        }
    }
    let heads: Vec<&str> = texts
        .iter()
        .zip(kinds)
        .filter(|(_, &k)| k == Kind::Heading)
        .map(|(t, _)| *t)
        .collect();
    let cleaned = heading::clean_blocks(&heads);
    let named =
        heading::titles_and_anchors(cleaned.into_iter().map(|c| (c.text, c.explicit)).collect());
    let path: Vec<&str> = named.texts.iter().map(String::as_str).collect();
    let line = context::header_line("Title", &path);
    let _ = context::clip(&line, 40);
    for anchor in &named.anchors {
        let _ = context::url(
            "https://x.org/{path_stem}/{url_path}#{anchor}",
            "docs/a b/index.md",
            Some(anchor),
            1,
            2,
        );
    }
}
