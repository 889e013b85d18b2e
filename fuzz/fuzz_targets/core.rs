//! Any text through every stage of the core that a document goes through (blocks, their
//! estimates, sections, leads and fillers, packing whole blocks, assembly): no input may
//! panic (a panic would become a reject; here it is a finding). The first byte picks the
//! format (markdown, MDX, plain text) so that every path is reached.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdchunk_core::assemble::{self, IdParts};
use mdchunk_core::blocks::{blocks, Document};
use mdchunk_core::estimate::estimates;
use mdchunk_core::kind::Kind;
use mdchunk_core::pack::{self, Limits};
use mdchunk_core::section;

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
    assemble::assemble(&units, &groups, &ids).expect("units the packer placed assemble");
});
