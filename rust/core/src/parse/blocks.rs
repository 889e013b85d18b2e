//! The blocks stage without its estimates: documents -> block columns, with code-point
//! offsets, heading paths and content-derived block ids.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use sha2::{Digest, Sha256};

use crate::parse::kind::Kind;
use crate::parse::lines::Lines;
use crate::parse::{parse, Block, Fallback};
use crate::pyunicode::first_word;
use crate::threads;

/// One document of the input.
#[derive(Debug, Clone, Copy)]
pub struct Document<'t> {
    pub text: &'t str,
    pub markdown: bool,
    pub mdx: bool,
}

/// Block columns of a batch of documents. Heading paths are kept once per distinct path
/// (`paths`), each block holding the index of its own (`path`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Columns {
    pub doc: Vec<u32>,
    pub block_index: Vec<i32>,
    pub block_id: Vec<String>,
    pub kind: Vec<Kind>,
    pub level: Vec<Option<i8>>,
    pub path: Vec<u32>,
    pub paths: Vec<(Vec<String>, Vec<i8>)>,
    pub char_start: Vec<i64>,
    pub char_end: Vec<i64>,
    /// the block's text as UTF-8 byte offsets into its document
    pub byte_start: Vec<usize>,
    pub byte_end: Vec<usize>,
    pub line_start: Vec<i32>,
    pub line_end: Vec<i32>,
    pub info: Vec<Option<String>>,
    pub lang: Vec<Option<String>>,
    pub alt: Vec<Option<String>>,
    pub item_starts: Vec<Option<Vec<i32>>>,
    pub n_rows: Vec<Option<i32>>,
    /// documents the reference parser must read (the walk met an event it does not
    /// handle, or pulldown-cmark panicked): none of their blocks are in the columns
    pub fallback: Vec<u32>,
}

/// The block columns of every document, in order.
pub fn blocks(docs: &[Document]) -> Columns {
    blocks_with(docs, parse)
}

/// `blocks` with the documents spread over `threads` threads: the same columns.
pub fn blocks_in_threads(docs: &[Document], threads: usize) -> Columns {
    let sizes: Vec<usize> = docs.iter().map(|d| d.text.len()).collect();
    let ranges = threads::ranges(&sizes, threads);
    let parts = threads::map(&ranges, |r| blocks(&docs[r]));
    let mut out = Columns::default();
    for (part, range) in parts.into_iter().zip(&ranges) {
        out.append(part, range.start as u32);
    }
    out
}

impl Columns {
    /// `other`'s rows after these, its documents numbered from `first_doc`.
    fn append(&mut self, other: Columns, first_doc: u32) {
        // every field named: a column added later cannot be forgotten here
        let Columns {
            doc,
            block_index,
            block_id,
            kind,
            level,
            path,
            paths,
            char_start,
            char_end,
            byte_start,
            byte_end,
            line_start,
            line_end,
            info,
            lang,
            alt,
            item_starts,
            n_rows,
            fallback,
        } = other;
        let first_path = self.paths.len() as u32;
        self.doc.extend(doc.iter().map(|d| d + first_doc));
        self.path.extend(path.iter().map(|p| p + first_path));
        self.paths.extend(paths);
        self.fallback.extend(fallback.iter().map(|d| d + first_doc));
        self.block_index.extend(block_index);
        self.block_id.extend(block_id);
        self.kind.extend(kind);
        self.level.extend(level);
        self.char_start.extend(char_start);
        self.char_end.extend(char_end);
        self.byte_start.extend(byte_start);
        self.byte_end.extend(byte_end);
        self.line_start.extend(line_start);
        self.line_end.extend(line_end);
        self.info.extend(info);
        self.lang.extend(lang);
        self.alt.extend(alt);
        self.item_starts.extend(item_starts);
        self.n_rows.extend(n_rows);
    }
}

type Parse = fn(&str, bool, bool) -> Result<(Lines, Vec<Block>), Fallback>;

/// `blocks` with a given parse: a document whose parse fails or panics is a fallback.
fn blocks_with(docs: &[Document], parse: Parse) -> Columns {
    let mut cols = Columns::default();
    for (i, doc) in docs.iter().enumerate() {
        let parsed = catch_unwind(AssertUnwindSafe(|| parse(doc.text, doc.markdown, doc.mdx)));
        match parsed {
            Ok(Ok((lines, found))) => {
                let (starts, ends) = lines.in_chars(doc.text);
                let bodies: Vec<&str> = found
                    .iter()
                    .map(|b| &doc.text[lines.starts[b.first]..lines.ends[b.last]])
                    .collect();
                for b in &found {
                    cols.byte_start.push(lines.starts[b.first]);
                    cols.byte_end.push(lines.ends[b.last]);
                }
                push_document(&mut cols, i as u32, found, &bodies, &starts, &ends);
            }
            _ => cols.fallback.push(i as u32),
        }
    }
    cols
}

fn push_document(
    cols: &mut Columns,
    doc: u32,
    found: Vec<Block>,
    bodies: &[&str],
    starts: &[usize],
    ends: &[usize],
) {
    let keys = heading_paths(cols, &found);
    let ids = block_ids(&found, bodies, &keys);
    for (index, (b, id)) in found.into_iter().zip(ids).enumerate() {
        let char_start = starts[b.first];
        cols.doc.push(doc);
        cols.block_index.push(index as i32);
        cols.block_id.push(id);
        cols.kind.push(b.kind);
        cols.level.push(b.level.map(|l| l as i8));
        cols.char_start.push(char_start as i64);
        cols.char_end.push(ends[b.last] as i64);
        cols.line_start.push(b.first as i32 + 1);
        cols.line_end.push(b.last as i32 + 1);
        let info = b.info.filter(|s| !s.is_empty());
        cols.lang
            .push(info.as_deref().and_then(first_word).map(str::to_owned));
        cols.info.push(info);
        cols.alt.push(b.alt);
        cols.item_starts.push(b.items.map(|items| {
            items
                .iter()
                .map(|&i| (starts[i] - char_start) as i32)
                .collect()
        }));
        cols.n_rows.push(b.n_rows);
    }
}

/// Every block's heading path (appended to `cols.path`/`cols.paths`: the headings above
/// it, outermost first, its own included) and the path's titles joined by \x1f.
fn heading_paths(cols: &mut Columns, found: &[Block]) -> Vec<String> {
    let mut stack: Vec<(u8, &str)> = Vec::new();
    let mut keys = Vec::with_capacity(found.len());
    let mut key = String::new();
    let mut current: Option<u32> = None;
    for b in found {
        if b.kind == Kind::Heading {
            let level = b.level.unwrap_or(0);
            while stack.last().is_some_and(|&(l, _)| l >= level) {
                stack.pop();
            }
            stack.push((level, b.title.as_deref().unwrap_or("")));
            let titles: Vec<String> = stack.iter().map(|&(_, t)| t.to_owned()).collect();
            let levels: Vec<i8> = stack.iter().map(|&(l, _)| l as i8).collect();
            key = titles.join("\x1f");
            cols.paths.push((titles, levels));
            current = Some(cols.paths.len() as u32 - 1);
        }
        let id = *current.get_or_insert_with(|| {
            cols.paths.push((Vec::new(), Vec::new()));
            cols.paths.len() as u32 - 1
        });
        cols.path.push(id);
        keys.push(key.clone());
    }
    keys
}

/// Content-derived ids: sha256 of kind, text, heading path and occurrence among
/// identical blocks, as 16 hex digits. Each block's text is read once, by the hash: the
/// digest of kind, text and path tells identical blocks apart, and the occurrence number is
/// hashed on from there.
fn block_ids(found: &[Block], bodies: &[&str], paths: &[String]) -> Vec<String> {
    let mut seen: HashMap<[u8; 32], usize> = HashMap::new();
    let mut out = Vec::with_capacity(found.len());
    for ((b, body), path) in found.iter().zip(bodies).zip(paths) {
        let mut hash = Sha256::new();
        for part in [b.kind.name(), body, path] {
            hash.update(part.as_bytes());
            hash.update([0u8]);
        }
        let n = seen.entry(hash.clone().finalize().into()).or_insert(0);
        hash.update(n.to_string().as_bytes());
        *n += 1;
        out.push(hex_prefix(&hash.finalize(), 16));
    }
    out
}

/// The first `n` lowercase hex digits of the sha256 of `data`.
pub fn short_hash(data: &[u8], n: usize) -> String {
    hex_prefix(&Sha256::digest(data), n)
}

/// The first `n` lowercase hex digits of `digest`.
fn hex_prefix(digest: &[u8], n: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(n);
    for byte in digest.iter() {
        for nibble in [byte >> 4, byte & 15] {
            if out.len() < n {
                out.push(HEX[nibble as usize] as char);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_give_the_same_columns() {
        let texts: Vec<String> = (0..40)
            .map(|i| {
                format!("# Title {i}\n\ntext {i}\n\n## Sub\n\n- a\n- b\n\n| a |\n|---|\n| 1 |\n")
            })
            .collect();
        let docs: Vec<Document> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Document {
                text: t,
                markdown: i % 5 != 0,
                mdx: i % 7 == 0,
            })
            .collect();
        let one = blocks(&docs);
        for n in [2, 3, 8, 64] {
            assert_eq!(blocks_in_threads(&docs, n), one, "{n} threads");
        }
    }

    #[test]
    fn hashes_are_hex_prefixes_of_sha256() {
        // hashlib.sha256(b"abc").hexdigest()
        let full = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(short_hash(b"abc", 64), full);
        assert_eq!(short_hash(b"abc", 16), &full[..16]);
    }

    #[test]
    fn ids_paths_and_offsets() {
        let text = "# A\n\nx\n\n## B\n\nx\n\n# C\n\nx\n\nx\n";
        let cols = blocks(&[Document {
            text,
            markdown: true,
            mdx: false,
        }]);
        let kinds: Vec<&str> = cols.kind.iter().map(|k| k.name()).collect();
        assert_eq!(
            kinds,
            [
                "heading",
                "paragraph",
                "heading",
                "paragraph",
                "heading",
                "paragraph",
                "paragraph"
            ]
        );
        let paths: Vec<&Vec<String>> = cols
            .path
            .iter()
            .map(|&p| &cols.paths[p as usize].0)
            .collect();
        assert_eq!(paths[3], &vec!["A".to_owned(), "B".to_owned()]);
        assert_eq!(paths[6], &vec!["C".to_owned()]);
        // identical paragraphs under the same heading differ by their occurrence number
        assert_ne!(cols.block_id[5], cols.block_id[6]);
        // the block id's recipe for the first paragraph: kind, text, heading path, occurrence
        assert_eq!(cols.block_id[1], short_hash(b"paragraph\0x\0A\x000", 16));
        assert_eq!((cols.char_start[1], cols.char_end[1]), (5, 6));
        assert_eq!((cols.line_start[6], cols.line_end[6]), (13, 13));
    }

    #[test]
    fn a_failed_or_panicking_parse_is_a_fallback() {
        fn flaky(text: &str, markdown: bool, mdx: bool) -> Result<(Lines, Vec<Block>), Fallback> {
            match text {
                "panic" => panic!("a parser bug"),
                "fail" => Err(Fallback("unexpected top-level block".to_owned())),
                _ => parse(text, markdown, mdx),
            }
        }
        let doc = |text| Document {
            text,
            markdown: true,
            mdx: false,
        };
        let cols = blocks_with(&[doc("a"), doc("panic"), doc("b"), doc("fail")], flaky);
        assert_eq!(cols.fallback, vec![1, 3]);
        assert_eq!(cols.doc, vec![0, 2]);
    }

    #[test]
    fn offsets_are_code_points() {
        let text = "é\r\n\r\n- a\r\n- ü\r\n";
        let cols = blocks(&[Document {
            text,
            markdown: true,
            mdx: false,
        }]);
        assert_eq!(cols.kind, vec![Kind::Paragraph, Kind::List]);
        assert_eq!((cols.char_start[1], cols.char_end[1]), (5, 13));
        assert_eq!((cols.byte_start[1], cols.byte_end[1]), (6, 15));
        assert_eq!(cols.item_starts[1], Some(vec![0, 5]));
    }
}
