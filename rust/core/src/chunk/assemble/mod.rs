//! A chunk's text and ids from its units: the units' texts joined as the
//! source joins them, the spans they cover, the lines those start and end on, the chunk id,
//! and the hash of embed_text. Offsets in and out are code points (Python str indices);
//! the text is sliced in bytes through a per-document map (`offsets`: a code point's byte,
//! a byte's line).

mod offsets;

use crate::parse::blocks::short_hash;
use crate::pyunicode::is_blank;
use offsets::{LineFinder, Text};

/// A document's text and units: unit `i` is `keys[i]` (its block id, or block_id@offset for
/// a piece), `texts[i]`, the spans `spans[span_starts[i]..span_starts[i + 1]]` (code
/// points, end-exclusive), `tokens[i]` and the index of its block, `block_index[i]`.
pub struct Units<'a> {
    pub text: &'a str,
    pub keys: &'a [&'a str],
    pub texts: &'a [&'a str],
    pub spans: &'a [(usize, usize)],
    pub span_starts: &'a [usize],
    pub tokens: &'a [i64],
    pub block_index: &'a [i64],
}

/// A chunk to assemble: its units in pack order, how many of them lead it again from the
/// chunk before (overlap), the context prefix of its embed_text, the anchor of the heading
/// it starts under, and for an image chunk its body (the alt text).
pub struct Group<'a> {
    pub units: &'a [usize],
    pub overlap: usize,
    pub prefix: &'a str,
    pub anchor: Option<&'a str>,
    pub image_body: Option<&'a str>,
}

/// What every chunk id of a document shares besides its units and context.
pub struct IdParts<'a> {
    pub doc_id: &'a str,
    pub chunker_version: &'a str,
    pub id_hash: &'a str,
}

/// One assembled chunk: its text, its merged spans (code points, sorted), whether the text
/// is the document's characters from the first span's start to the last span's end, the
/// 1-based lines of its first and last character, its id, the tokens of its overlap units
/// and the first and last block it draws from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub body: String,
    pub spans: Vec<(usize, usize)>,
    pub is_slice: bool,
    pub line_start: usize,
    pub line_end: usize,
    pub chunk_id: String,
    pub overlap_tokens: i64,
    pub block_start: i64,
    pub block_end: i64,
}

/// The chunks of a document's groups, or why the inputs cannot be assembled (a unit index
/// or a span out of range, a group or unit without any).
pub fn assemble(units: &Units, groups: &[Group], ids: &IdParts) -> Result<Vec<Chunk>, String> {
    let doc = Text::of(units.text);
    check(units, groups, doc.n_chars)?;
    let mut lines = LineFinder::of(units.text);
    Ok(groups
        .iter()
        .map(|g| chunk_of(&doc, units, g, ids, &mut lines))
        .collect())
}

fn chunk_of(doc: &Text, units: &Units, g: &Group, ids: &IdParts, lines: &mut LineFinder) -> Chunk {
    let (body, spans) = body_and_spans(doc, units, g.units);
    let (first, last) = (spans[0], spans[spans.len() - 1]);
    let keys = g.units.iter().map(|&k| units.keys[k]);
    let blocks = || g.units.iter().map(|&k| units.block_index[k]);
    let body = g.image_body.map_or(body, str::to_owned);
    Chunk {
        is_slice: body == units.text[doc.byte(first.0)..doc.byte(last.1)],
        body,
        line_start: lines.line_of(doc.byte(first.0)),
        line_end: lines.line_of(doc.byte(last.1.saturating_sub(1).max(last.0))),
        chunk_id: chunk_id(ids, keys, g.prefix, g.anchor),
        spans,
        overlap_tokens: g.units[..g.overlap.min(g.units.len())]
            .iter()
            .map(|&k| units.tokens[k])
            .sum(),
        block_start: blocks().min().unwrap_or(0),
        block_end: blocks().max().unwrap_or(0),
    }
}

/// The hash of a chunk's embed_text: the first 32 hex digits of its sha256, equal for equal
/// texts across documents (each distinct text is embedded once).
pub fn embed_hash(embed_text: &str) -> String {
    short_hash(embed_text.as_bytes(), 32)
}

/// sha256 of the document, chunker version, unit keys, policy, context and anchor, joined
/// by U+001F: the first 32 hex digits.
pub fn chunk_id<'k>(
    ids: &IdParts,
    keys: impl Iterator<Item = &'k str>,
    prefix: &str,
    anchor: Option<&str>,
) -> String {
    let mut payload = String::new();
    let mut part = |s: &str| {
        payload.push_str(s);
        payload.push('\x1f');
    };
    part(ids.doc_id);
    part(ids.chunker_version);
    keys.for_each(&mut part);
    part(ids.id_hash);
    part(prefix);
    payload.push_str(anchor.unwrap_or(""));
    short_hash(payload.as_bytes(), 32)
}

fn check(units: &Units, groups: &[Group], n_chars: usize) -> Result<(), String> {
    let n = units.keys.len();
    let lengths = [
        units.texts.len(),
        units.tokens.len(),
        units.block_index.len(),
    ];
    if lengths != [n; 3] || units.span_starts.len() != n + 1 {
        return Err("the unit lists differ in length".to_owned());
    }
    let starts = units.span_starts;
    if starts.windows(2).any(|w| w[0] >= w[1]) || starts[n] != units.spans.len() || starts[0] != 0 {
        return Err("every unit needs one span or more, in order".to_owned());
    }
    if units.spans.iter().any(|&(s, e)| s > n_chars || e > n_chars) {
        return Err("a span lies outside the text".to_owned());
    }
    if groups
        .iter()
        .any(|g| g.units.is_empty() || g.units.iter().any(|&k| k >= n))
    {
        return Err("a group is empty or names a unit that does not exist".to_owned());
    }
    Ok(())
}

/// The units' texts joined and their spans merged: in one pass over their gaps when each
/// unit has one span and they follow each other in the source (the common case; the gap
/// between two is then the same slice for both), else by `join` and `merge_spans`.
fn body_and_spans(doc: &Text, units: &Units, us: &[usize]) -> (String, Vec<(usize, usize)>) {
    let spans_of = |k: usize| &units.spans[units.span_starts[k]..units.span_starts[k + 1]];
    let general = || {
        let all: Vec<(usize, usize)> = us
            .iter()
            .flat_map(|&k| spans_of(k).iter().copied())
            .collect();
        (join(doc, units, us), merge_spans(doc, all))
    };
    if us.len() == 1 || us.iter().any(|&k| spans_of(k).len() != 1) {
        return general();
    }
    let mut body = String::from(units.texts[us[0]]);
    let mut spans = vec![spans_of(us[0])[0]];
    let mut end = spans[0].1;
    for &k in &us[1..] {
        let (start, stop) = spans_of(k)[0];
        if start < end {
            return general(); // out of source order
        }
        let gap = doc.slice(end, start);
        if is_blank(gap) {
            body.push_str(gap);
            spans.last_mut().unwrap().1 = stop; // stop >= start >= end: the span ends here
        } else {
            body.push_str("\n\n");
            spans.push((start, stop));
        }
        body.push_str(units.texts[k]);
        end = stop;
    }
    (body, spans)
}

/// Unit texts, separated by the source's own whitespace when they are adjacent (nothing
/// between two pieces cut where no space was, as between sentences of Japanese), else by a
/// blank line.
fn join(doc: &Text, units: &Units, us: &[usize]) -> String {
    let mut out = String::from(units.texts[us[0]]);
    for pair in us.windows(2) {
        let a = units.spans[units.span_starts[pair[0] + 1] - 1].1; // previous unit's last end
        let b = units.spans[units.span_starts[pair[1]]].0; // this unit's first start
        let gap = if a <= b { doc.slice(a, b) } else { "\n\n" };
        out.push_str(if is_blank(gap) { gap } else { "\n\n" });
        out.push_str(units.texts[pair[1]]);
    }
    out
}

/// Sorted spans, joined where only whitespace separates them.
fn merge_spans(doc: &Text, mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if spans.len() == 1 {
        return spans;
    }
    spans.sort_unstable(); // equal pairs are interchangeable: no need for a stable sort
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 || is_blank(doc.slice(last.1, s)) => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: IdParts = IdParts {
        doc_id: "d",
        chunker_version: "v",
        id_hash: "h",
    };

    /// Units of one span each, with keys "k0", "k1"...
    fn units_of<'a>(
        text: &'a str,
        texts: &'a [&'a str],
        spans: &'a [(usize, usize)],
    ) -> Chunks<'a> {
        Chunks {
            text,
            keys: ["k0", "k1", "k2", "k3"][..texts.len()].to_vec(),
            texts,
            spans,
            span_starts: (0..=texts.len()).collect(),
            numbers: (0..texts.len() as i64).collect(),
        }
    }

    struct Chunks<'a> {
        text: &'a str,
        keys: Vec<&'a str>,
        texts: &'a [&'a str],
        spans: &'a [(usize, usize)],
        span_starts: Vec<usize>,
        numbers: Vec<i64>,
    }

    impl Chunks<'_> {
        fn of(&self, us: &[usize]) -> Chunk {
            let units = Units {
                text: self.text,
                keys: &self.keys,
                texts: self.texts,
                spans: self.spans,
                span_starts: &self.span_starts,
                tokens: &self.numbers,
                block_index: &self.numbers,
            };
            let group = Group {
                units: us,
                overlap: 1,
                prefix: "",
                anchor: None,
                image_body: None,
            };
            assemble(&units, &[group], &IDS).unwrap().remove(0)
        }
    }

    #[test]
    fn adjacent_units_keep_the_whitespace_between_them() {
        let text = "a\n\nb\u{1c}c";
        let c = units_of(text, &["a", "b", "c"], &[(0, 1), (3, 4), (5, 6)]);
        let chunk = c.of(&[0, 1, 2]);
        // U+001C is whitespace to Python: the gap joins, one span covers all
        assert_eq!(chunk.body, "a\n\nb\u{1c}c");
        assert_eq!(chunk.spans, vec![(0, 6)]);
        assert_eq!((chunk.line_start, chunk.line_end), (1, 3));
    }

    #[test]
    fn a_gap_with_text_is_a_blank_line_and_a_new_span() {
        let text = "é x ü";
        let c = units_of(text, &["é", "ü"], &[(0, 1), (4, 5)]);
        let chunk = c.of(&[0, 1]);
        assert_eq!(chunk.body, "é\n\nü");
        assert_eq!(chunk.spans, vec![(0, 1), (4, 5)]);
    }

    #[test]
    fn units_out_of_source_order_have_sorted_merged_spans() {
        let text = "a b\n\nc";
        let c = units_of(text, &["c", "a", "b"], &[(5, 6), (0, 1), (2, 3)]);
        let chunk = c.of(&[0, 1, 2]);
        // c then a: backwards, a blank line; a then b: the source's space
        assert_eq!(chunk.body, "c\n\na b");
        assert_eq!(chunk.spans, vec![(0, 6)]);
        assert_eq!((chunk.line_start, chunk.line_end), (1, 3));
        // the first unit is the overlap (tokens 0); blocks 0..=2
        let c = units_of(text, &["c", "a", "b"], &[(5, 6), (0, 1), (2, 3)]);
        let chunk = c.of(&[2, 1]);
        assert_eq!(
            (chunk.overlap_tokens, chunk.block_start, chunk.block_end),
            (2, 1, 2)
        );
    }

    #[test]
    fn lines_count_crlf_once_and_a_lone_cr() {
        let text = "a\r\nb\rc\nd";
        let c = units_of(
            text,
            &["a", "b", "c", "d"],
            &[(0, 1), (3, 4), (5, 6), (7, 8)],
        );
        let lines: Vec<(usize, usize)> = (0..4)
            .map(|k| {
                let chunk = c.of(&[k]);
                (chunk.line_start, chunk.line_end)
            })
            .collect();
        assert_eq!(lines, vec![(1, 1), (2, 2), (3, 3), (4, 4)]);
        // a span ending with its line break ends on that line
        let c = units_of("ab\ncd", &["ab\n"], &[(0, 3)]);
        assert_eq!(c.of(&[0]).line_end, 1);
    }

    #[test]
    fn ids_hash_every_part_joined_by_unit_separators() {
        let keys = ["k0", "k1"].into_iter();
        // hashlib.sha256("d\x1fv\x1fk0\x1fk1\x1fh\x1fp\x1fa".encode()).hexdigest()[:32]
        let want = short_hash("d\x1fv\x1fk0\x1fk1\x1fh\x1fp\x1fa".as_bytes(), 32);
        assert_eq!(chunk_id(&IDS, keys, "p", Some("a")), want);
        let none = short_hash("d\x1fv\x1fh\x1f\x1f".as_bytes(), 32);
        assert_eq!(chunk_id(&IDS, std::iter::empty(), "", None), none);
        assert_eq!(want.len(), 32);
    }

    #[test]
    fn embed_hashes_are_sha256_prefixes() {
        // hashlib.sha256("T\n\nbody".encode()).hexdigest()[:32]
        assert_eq!(embed_hash("T\n\nbody"), short_hash(b"T\n\nbody", 32));
        assert_eq!(embed_hash("é").len(), 32);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let units = Units {
            text: "ab",
            keys: &["k"],
            texts: &["ab"],
            spans: &[(0, 3)],
            span_starts: &[0, 1],
            tokens: &[1],
            block_index: &[0],
        };
        let group = Group {
            units: &[0],
            overlap: 0,
            prefix: "",
            anchor: None,
            image_body: None,
        };
        assert!(assemble(&units, &[group], &IDS).is_err());
    }
}
