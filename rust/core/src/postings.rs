//! The terms of texts for BM25: runs of letters, marks and digits
//! of the lower-cased text, where a run of a script written without spaces between words
//! (CJK ideographs, kana, Hangul, Thai, Lao, Khmer, Myanmar) gives its overlapping
//! two-character slices, as Lucene's CJK analyzer does. `sql/search.sql` analyses queries
//! with the same classes, so documents and queries meet.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

use crate::pyunicode::within;
use crate::tables::lowercase::{CASED, CASE_IGNORABLE};

/// The scripts whose runs give bigrams, as code point ranges (the class of
/// sql/search.sql). Kana includes the prolonged sound mark (ー) and iteration marks but not
/// the middle dot (・), which separates words.
pub const BIGRAM: [(u32, u32); 17] = [
    (0x1100, 0x11FF),
    (0x3005, 0x3007),
    (0x3041, 0x309F),
    (0x30A1, 0x30FA),
    (0x30FC, 0x30FF),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x2FFFF),
    (0x0E00, 0x0E7F),
    (0x0E80, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
];

/// Whether `c` is in a script whose runs give bigrams.
pub fn is_bigram(c: char) -> bool {
    let cp = c as u32;
    BIGRAM.iter().any(|&(lo, hi)| lo <= cp && cp <= hi)
}

/// The letters, marks and digits (`[\p{L}\p{M}\p{N}]`) as sorted code point ranges: the
/// Unicode tables of the `regex` crate, those of polars' `extract_all`, which made the
/// terms before.
fn word_ranges() -> &'static [(u32, u32)] {
    static WORD: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    WORD.get_or_init(|| {
        let hir = regex_syntax::parse(r"[\p{L}\p{M}\p{N}]").expect("the class parses");
        match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => class
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            other => unreachable!("a Unicode class, not {other:?}"),
        }
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Bigram,
    Word,
    Other,
}

fn run_of(c: char) -> Run {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            Run::Word
        } else {
            Run::Other
        };
    }
    if is_bigram(c) {
        return Run::Bigram;
    }
    let (cp, word) = (c as u32, word_ranges());
    let i = word.partition_point(|&(_, hi)| hi < cp);
    if i < word.len() && word[i].0 <= cp {
        Run::Word
    } else {
        Run::Other
    }
}

/// The runs of `text`, each with whether it is a bigram run: a run of bigram characters,
/// or of letters, marks and digits that are not (the leftmost-first matches of
/// `[BIGRAM]+|[[\p{L}\p{M}\p{N}]--[BIGRAM]]+`): a Latin word touching a CJK one
/// ("vue文档") ends where the other script begins.
fn runs(text: &str) -> impl Iterator<Item = (bool, &str)> {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || loop {
        let (start, c) = chars.next()?;
        let kind = run_of(c);
        if kind == Run::Other {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(at, next)) = chars.peek() {
            if run_of(next) != kind {
                break;
            }
            end = at + next.len_utf8();
            chars.next();
        }
        return Some((kind == Run::Bigram, &text[start..end]));
    })
}

/// Every term of `lower` (an already lower-cased text), in order: a run, or the
/// overlapping two-character slices of a bigram run longer than one character.
pub fn each_term<'t>(lower: &'t str, mut f: impl FnMut(&'t str)) {
    for (bigram, run) in runs(lower) {
        let mut chars = run.char_indices().skip(1);
        match chars.next() {
            Some((mut at, _)) if bigram => {
                let mut start = 0;
                for (next, _) in chars {
                    f(&run[start..next]);
                    (start, at) = (at, next);
                }
                f(&run[start..]);
            }
            _ => f(run),
        }
    }
}

/// `text` lower-cased as polars' `str.to_lowercase` does, which made the terms before:
/// Rust's `char::to_lowercase` of every character but the capital sigma, which becomes ς
/// at the end of a word and σ elsewhere (Unicode's Final_Sigma, as `str::to_lowercase`),
/// judged with polars' Cased and Case_Ignorable classes (an older Unicode than Rust's).
pub fn lowercase(text: &str) -> String {
    if !text.contains('Σ') {
        return text.to_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == 'Σ' {
            let end = i + 'Σ'.len_utf8();
            let word_final =
                cased_next(text[..i].chars().rev()) && !cased_next(text[end..].chars());
            out.push(if word_final { 'ς' } else { 'σ' });
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Whether the first character of `chars` that is not case-ignorable is cased.
fn cased_next(mut chars: impl Iterator<Item = char>) -> bool {
    chars
        .find(|&c| !within(CASE_IGNORABLE, c))
        .is_some_and(|c| within(CASED, c))
}

/// Terms as an Arrow string column (UTF-8 bytes, n + 1 offsets) and the input text each
/// came from.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Terms {
    pub text: Vec<u8>,
    pub offsets: Vec<i64>,
    pub row: Vec<u32>,
}

impl Terms {
    fn new() -> Self {
        Terms {
            offsets: vec![0],
            ..Terms::default()
        }
    }

    fn push(&mut self, term: &str, row: u32) {
        self.text.extend_from_slice(term.as_bytes());
        self.offsets.push(self.text.len() as i64);
        self.row.push(row);
    }
}

/// The postings rows of texts: one per distinct (text, term), texts in order and a text's
/// terms in the order of their first occurrence; `tf` its occurrences, `doc_len` the
/// text's number of terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Postings {
    pub terms: Terms,
    pub tf: Vec<i32>,
    pub doc_len: Vec<i32>,
}

/// Every term of every text (`lowercase`), occurrence by occurrence.
pub fn terms<'a>(texts: impl IntoIterator<Item = &'a str>) -> Terms {
    let mut out = Terms::new();
    for (row, text) in texts.into_iter().enumerate() {
        let lower = lowercase(text);
        each_term(&lower, |term| out.push(term, row as u32));
    }
    out
}

/// The postings of `texts`, one text at a time: memory beyond the output is one text's
/// lower-cased copy and its distinct terms.
pub fn postings<'a>(texts: impl IntoIterator<Item = &'a str>) -> Postings {
    let mut out = Postings {
        terms: Terms::new(),
        ..Postings::default()
    };
    for (row, text) in texts.into_iter().enumerate() {
        let lower = lowercase(text);
        let mut seen: HashMap<&str, usize, BuildHasherDefault<FxHasher>> = HashMap::default();
        let mut found: Vec<(&str, i32)> = Vec::new();
        each_term(&lower, |term| {
            let at = *seen.entry(term).or_insert_with(|| {
                found.push((term, 0));
                found.len() - 1
            });
            found[at].1 += 1;
        });
        let doc_len: i32 = found.iter().map(|&(_, tf)| tf).sum();
        for (term, tf) in found {
            out.terms.push(term, row as u32);
            out.tf.push(tf);
            out.doc_len.push(doc_len);
        }
    }
    out
}

/// The multiply-rotate hash of rustc's FxHasher, eight bytes at a time: terms are short
/// and not chosen to collide, so SipHash's protection costs time for nothing.
#[derive(Default)]
struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().unwrap()));
        }
        let mut last = [0u8; 8];
        let rest = words.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(last) ^ rest.len() as u64);
    }

    fn write_u8(&mut self, b: u8) {
        self.add(b as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let t = terms([text]);
        t.offsets
            .windows(2)
            .map(|w| String::from_utf8(t.text[w[0] as usize..w[1] as usize].to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn runs_of_letters_marks_and_digits_lower_cased() {
        assert_eq!(
            all("Hello, World! v1.2 API_KEY naïve"),
            ["hello", "world", "v1", "2", "api", "key", "naïve"]
        );
        assert_eq!(all("  ,;  "), Vec::<String>::new());
    }

    #[test]
    fn bigram_runs_give_overlapping_pairs() {
        assert_eq!(all("インテグ"), ["イン", "ンテ", "テグ"]);
        assert_eq!(all("vue文档"), ["vue", "文档"]);
        assert_eq!(all("한 국어"), ["한", "국어"]);
        assert_eq!(
            all("コンポーネント・テ"),
            ["コン", "ンポ", "ポー", "ーネ", "ネン", "ント", "テ"]
        );
        assert_eq!(all("𠀀𠀁a"), ["𠀀𠀁", "a"]);
    }

    #[test]
    fn lower_case_is_rusts_with_final_sigma() {
        assert_eq!(all("ΟΔΟΣ ΣΑΣ İ"), ["οδος", "σας", "i\u{307}"]);
        assert_eq!(lowercase("AΣ. AΣ.B Σ 1Σ"), "aς. aσ.b σ 1σ");
        // U+0295 is cased to polars (Unicode 15), not to Rust since Unicode 16.
        assert_eq!(lowercase("AΣ\u{295}"), "aσ\u{295}");
    }

    #[test]
    fn postings_count_distinct_terms_in_first_occurrence_order() {
        let p = postings(["b a B c a b", "", "x"]);
        let t = &p.terms;
        assert_eq!(t.text, b"bacx");
        assert_eq!(t.offsets, [0, 1, 2, 3, 4]);
        assert_eq!(t.row, [0, 0, 0, 2]);
        assert_eq!(p.tf, [3, 2, 1, 1]);
        assert_eq!(p.doc_len, [6, 6, 6, 1]);
    }

    #[test]
    fn bigram_class_is_exact() {
        for (c, want) in [
            ('\u{30FB}', false),
            ('\u{30FC}', true),
            ('\u{0E3F}', true),
            ('\u{10FF}', false),
            ('a', false),
        ] {
            assert_eq!(is_bigram(c), want, "{c:?}");
        }
    }
}
