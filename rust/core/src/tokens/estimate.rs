//! The token estimate of block texts: every character class counted
//! in one pass over a text's UTF-8 bytes, a document's language judged over all its texts
//! of the batch, and the weighted sum in the float operations and order of
//! `tokens._weighted`, so the numbers equal the Python ones to the bit. The classes and
//! weights are generated from the Python ones (tools/gen_estimate.py).

use std::sync::OnceLock;

use crate::tables::estimate::*;

/// The counts of one text: every class of WEIGHTED but `foreign` (which needs the
/// document), English function words, and code points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    pub classes: [u64; N_WEIGHTED],
    pub english: u64,
    pub chars: u64,
}

/// How a text's letters are judged: by the text alone (`None`), or in a document that
/// reads (or not) as English.
pub type EnglishDocument = Option<bool>;

// An ASCII byte's code: its class, and what runs, breaks and English words need to know.
const LOWER_CODE: usize = 0;
const UPPER_CODE: usize = 1;
const DIGIT_CODE: usize = 2;
const UNDERSCORE_CODE: usize = 3; // punctuation, and part of a word for `\b`
const PUNCT_CODE: usize = 4;
const SPACE_CODE: usize = 5;
const CONTROL_CODE: usize = 6;
const NON_ASCII_CODE: usize = 7; // before the first byte and after a non-ASCII character
const CODES: usize = 8;
const fn is_word(code: usize) -> bool {
    code <= UNDERSCORE_CODE
}
const fn is_letter(code: usize) -> bool {
    code == LOWER_CODE || code == UPPER_CODE
}

const BYTE_CODE: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let bits = ASCII[b];
        let class = bits & (IS_LETTERS | IS_DIGITS | IS_PUNCT | IS_SPACE | IS_CONTROLS);
        assert!(class.count_ones() == 1, "every ASCII byte is in one class");
        assert!(bits & (IS_LOWER | IS_UPPER) == 0 || class == IS_LETTERS);
        assert!(class != IS_LETTERS || bits & (IS_LOWER | IS_UPPER) != 0);
        let code = if bits & IS_LOWER != 0 {
            LOWER_CODE
        } else if bits & IS_UPPER != 0 {
            UPPER_CODE
        } else if class == IS_DIGITS {
            DIGIT_CODE
        } else if b == b'_' as usize {
            assert!(class == IS_PUNCT, "_ is punctuation");
            UNDERSCORE_CODE
        } else if class == IS_PUNCT {
            PUNCT_CODE
        } else if class == IS_SPACE {
            SPACE_CODE
        } else {
            CONTROL_CODE
        };
        assert!(is_word(code) == ((b as u8).is_ascii_alphanumeric() || b == b'_' as usize));
        table[b] = code as u8;
        b += 1;
    }
    table
};

pub fn counts(text: &str) -> Counts {
    let mut c = [0u64; N_WEIGHTED];
    let bytes = text.as_bytes();
    // how often each (previous code, code) pair occurs, by byte position mod 2 (so that a
    // repeated pair does not wait on one counter)
    let mut lanes = [[0u64; CODES * CODES]; 2];
    let (mut non_ascii, mut english) = (0u64, 0u64);
    let mut prev = NON_ASCII_CODE;
    let mut word_start = usize::MAX; // where the current run of word characters started
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b >= 0x80 {
            let ch = text[i..]
                .chars()
                .next()
                .expect("a character at a lead byte");
            non_ascii += 1;
            classify(ch as u32, &mut c);
            english += end_word(bytes, &mut word_start, i);
            prev = NON_ASCII_CODE;
            i += ch.len_utf8();
            continue;
        }
        let code = BYTE_CODE[b as usize] as usize;
        lanes[i & 1][prev * CODES + code] += 1;
        if is_word(code) != is_word(prev) {
            if is_word(code) {
                word_start = i;
            } else {
                english += end_word(bytes, &mut word_start, i);
            }
        }
        prev = code;
        i += 1;
    }
    english += end_word(bytes, &mut word_start, bytes.len());
    let mut pair = [[0u64; CODES]; CODES];
    let mut of_code = [0u64; CODES];
    for a in 0..CODES {
        for b in 0..CODES {
            pair[a][b] = lanes[0][a * CODES + b] + lanes[1][a * CODES + b];
            of_code[b] += pair[a][b];
        }
    }
    c[LETTERS] = of_code[LOWER_CODE] + of_code[UPPER_CODE];
    c[DIGITS] = of_code[DIGIT_CODE];
    c[PUNCT] = of_code[PUNCT_CODE] + of_code[UNDERSCORE_CODE];
    c[SPACE] = of_code[SPACE_CODE];
    c[CONTROLS] = of_code[CONTROL_CODE];
    for (a, row) in pair.iter().enumerate() {
        if !is_letter(a) {
            c[WORDS] += row[LOWER_CODE] + row[UPPER_CODE];
        }
        if a != DIGIT_CODE {
            c[NUMBERS] += row[DIGIT_CODE];
        }
    }
    let (l, u, d) = (LOWER_CODE, UPPER_CODE, DIGIT_CODE);
    c[BREAKS] = pair[l][u] + pair[l][d] + pair[u][d] + pair[d][l] + pair[d][u];
    let chars = of_code.iter().sum::<u64>() + non_ascii;
    let wide = 2 * c[TWO_BYTE] + 3 * (c[CJK] + c[HANGUL]);
    c[OTHER] = bytes.len() as u64 - (chars - non_ascii) - wide;
    Counts {
        classes: c,
        english,
        chars,
    }
}

/// 1 when the run of ASCII word characters that ends at `end` is an English function word:
/// a match of `\b(?:the|and|...)\b` (ASCII word boundaries, any case) is exactly such a
/// whole run.
fn end_word(bytes: &[u8], start: &mut usize, end: usize) -> u64 {
    let a = std::mem::replace(start, usize::MAX);
    if a == usize::MAX {
        return 0;
    }
    let run = &bytes[a..end];
    if !(2..=7).contains(&run.len()) {
        return 0; // no English word is shorter or longer
    }
    u64::from(english_words().binary_search(&folded(run)).is_ok())
}

/// A run of at most 7 ASCII word characters as one number, letters in lower case (digits
/// and `_` stay apart from every letter).
fn folded(run: &[u8]) -> u64 {
    run.iter().fold(0, |key, &b| key << 8 | u64::from(b | 0x20))
}

/// ENGLISH_WORDS folded and sorted.
fn english_words() -> &'static [u64] {
    static WORDS: OnceLock<Vec<u64>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mut keys: Vec<u64> = ENGLISH_WORDS.iter().map(|w| folded(w)).collect();
        keys.sort_unstable();
        keys
    })
}

/// Adds a non-ASCII character to every class of code point ranges it is in.
fn classify(cp: u32, c: &mut [u64; N_WEIGHTED]) {
    if let Some(&mask) = bmp_classes().get(cp as usize) {
        let mut mask = mask;
        while mask != 0 {
            c[RANGES[mask.trailing_zeros() as usize].0] += 1;
            mask &= mask - 1;
        }
        return;
    }
    for &(class, ranges) in RANGES {
        let i = ranges.partition_point(|&(_, hi)| hi < cp);
        if i < ranges.len() && ranges[i].0 <= cp {
            c[class] += 1;
        }
    }
}

/// For every code point of the Basic Multilingual Plane: bit k set when it is in the
/// ranges of `RANGES[k]`.
fn bmp_classes() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        assert!(RANGES.len() <= 16, "a class a bit of u16");
        let mut table = vec![0u16; 0x10000];
        for (k, &(_, ranges)) in RANGES.iter().enumerate() {
            for &(lo, hi) in ranges.iter().filter(|&&(lo, _)| lo < 0x10000) {
                for cell in &mut table[lo as usize..=hi.min(0xFFFF) as usize] {
                    *cell |= 1 << k;
                }
            }
        }
        table
    })
}

/// `english >= FOREIGN_SHARE * words`, in float64 as `tokens._reads_english`.
pub fn reads_english(english: u64, words: u64) -> bool {
    english as f64 >= FOREIGN_SHARE * words as f64
}

/// Whether a text counts its letters as another language's (`tokens._foreign`).
pub fn foreign(counts: &Counts, english_document: EnglishDocument) -> bool {
    let words = counts.classes[WORDS];
    let judged_english = words >= FOREIGN_MIN_WORDS && reads_english(counts.english, words);
    match english_document {
        Some(true) => false,
        Some(false) => !judged_english,
        None => words >= FOREIGN_MIN_WORDS && !judged_english,
    }
}

/// The weights of a bias and group (prose, or code for code-like kinds), scaled at run
/// time as `tokens.weights` does; None for an unknown bias.
pub fn weights(bias: &str, code: bool) -> Option<[f64; N_WEIGHTED]> {
    let &(_, factor) = BIAS_FACTORS.iter().find(|(name, _)| *name == bias)?;
    let mut w = if code { CODE } else { PROSE };
    for (weight, scaled) in w.iter_mut().zip(SCALED) {
        if scaled {
            *weight *= factor;
        }
    }
    Some(w)
}

/// `ceil(max(sum of count * weight in WEIGHTED order, letters * LETTER_FLOOR))`.
pub fn estimate_counts(counts: &Counts, foreign: bool, w: &[f64; N_WEIGHTED]) -> i64 {
    let mut c = counts.classes;
    c[FOREIGN] = if foreign { c[LETTERS] } else { 0 };
    let mut total = c[0] as f64 * w[0];
    for i in 1..N_WEIGHTED {
        total += c[i] as f64 * w[i];
    }
    total.max(c[LETTERS] as f64 * LETTER_FLOOR).ceil() as i64
}

/// The estimate of one text (`tokens.estimate`).
pub fn estimate(text: &str, w: &[f64; N_WEIGHTED], english_document: EnglishDocument) -> i64 {
    let c = counts(text);
    estimate_counts(&c, foreign(&c, english_document), w)
}

/// (code points, estimate) of every text of a batch: `code[i]` picks the code weights,
/// `group[i]` is the text's document (0..n_groups); a document reads as English over all
/// its texts of the batch (`bulk_estimate.estimates`).
pub fn estimates(
    texts: &[&str],
    code: &[bool],
    group: &[u32],
    bias: &str,
) -> Option<(Vec<i32>, Vec<i32>)> {
    estimates_and_english(texts, code, group, bias).map(|(n_chars, est, _)| (n_chars, est))
}

/// `estimates`, and per group whether it reads as English (each text counted once).
pub fn estimates_and_english(
    texts: &[&str],
    code: &[bool],
    group: &[u32],
    bias: &str,
) -> Option<(Vec<i32>, Vec<i32>, Vec<bool>)> {
    let (prose_w, code_w) = (weights(bias, false)?, weights(bias, true)?);
    let all: Vec<Counts> = texts.iter().map(|t| counts(t)).collect();
    let english = documents_read_english(&all, group);
    let mut n_chars = Vec::with_capacity(texts.len());
    let mut est = Vec::with_capacity(texts.len());
    for ((c, &g), &is_code) in all.iter().zip(group).zip(code) {
        let doc = english[g as usize];
        let w = if is_code { &code_w } else { &prose_w };
        n_chars.push(c.chars as i32);
        est.push(estimate_counts(c, foreign(c, Some(doc)), w) as i32);
    }
    Some((n_chars, est, english))
}

/// Per text: whether its document (`group[i]`) reads as English over all its texts
/// (`tokens.english_document_expr`).
pub fn english_documents(texts: &[&str], group: &[u32]) -> Vec<bool> {
    let all: Vec<Counts> = texts.iter().map(|t| counts(t)).collect();
    let english = documents_read_english(&all, group);
    group.iter().map(|&g| english[g as usize]).collect()
}

/// Per document (0..the largest group): whether its texts read as English together.
fn documents_read_english(all: &[Counts], group: &[u32]) -> Vec<bool> {
    let n_groups = group.iter().map(|&g| g as usize + 1).max().unwrap_or(0);
    let (mut english, mut words) = (vec![0u64; n_groups], vec![0u64; n_groups]);
    for (c, &g) in all.iter().zip(group) {
        english[g as usize] += c.english;
        words[g as usize] += c.classes[WORDS];
    }
    english
        .iter()
        .zip(&words)
        .map(|(&e, &w)| reads_english(e, w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tokens.estimate(text, "balanced", group, english_document) for
    /// [prose/None, prose/True, prose/False, code/None, code/True, code/False]
    fn six(text: &str) -> [i64; 6] {
        let (p, c) = (
            weights("balanced", false).unwrap(),
            weights("balanced", true).unwrap(),
        );
        let docs = [None, Some(true), Some(false)];
        let mut out = [0; 6];
        for (i, w) in [p, c].iter().enumerate() {
            for (j, d) in docs.iter().enumerate() {
                out[3 * i + j] = estimate(text, w, *d);
            }
        }
        out
    }

    #[test]
    fn the_python_test_vectors() {
        assert_eq!(six("Hello world, this is a test."), [8, 8, 14, 11, 11, 11]);
        assert_eq!(six("fooBar123 baz_qux(1, 2)"), [16, 16, 19, 19, 19, 19]);
        assert_eq!(six("日本語のテキストです。"), [16; 6]);
        assert_eq!(six("한국어 문장입니다"), [10; 6]);
        assert_eq!(six("Ελληνικά κείμενα"), [18; 6]);
        assert_eq!(six("emoji 😀 ok"), [7, 7, 9, 8, 8, 8]);
        assert_eq!(
            six("Dies ist ein deutscher Satz mit vielen Wörtern und mehr Text hier jetzt"),
            [31, 16, 31, 22, 22, 22]
        );
        assert_eq!(six("\x1b[0m\t\n"), [6, 6, 7, 8, 8, 8]);
        assert_eq!(six(""), [0; 6]);
    }

    #[test]
    fn prose_bias_scales_the_ascii_weights_at_run_time() {
        let w = weights("prose", false).unwrap();
        assert_eq!(w[LETTERS], 0.17381000000000002);
        assert_eq!(w[CJK], 1.348);
        assert!(weights("none", false).is_none());
    }

    #[test]
    fn classes_runs_and_breaks() {
        let c = counts("fooBar123 baz_qux(1, 2)");
        assert_eq!(c.classes[LETTERS], 12);
        assert_eq!(c.classes[WORDS], 3); // fooBar, baz, qux
        assert_eq!(c.classes[NUMBERS], 3);
        assert_eq!(c.classes[BREAKS], 2); // oB, r1
        assert_eq!(c.chars, 23);
        let c = counts("The cat and THE dog, the_end then");
        assert_eq!(c.english, 4); // The, and, THE, then; not the_end
        let c = counts("é中한😀");
        assert_eq!(
            (
                c.classes[TWO_BYTE],
                c.classes[CJK],
                c.classes[HANGUL],
                c.classes[FOUR_BYTE]
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(c.classes[OTHER], 4); // the emoji's bytes
        assert_eq!(c.chars, 4);
    }

    #[test]
    fn a_document_is_judged_over_all_its_texts() {
        let english = "the and that with this are from you";
        let german = "Dies ist ein deutscher Satz mit vielen Wörtern und mehr Text hier jetzt";
        let (_, alone) = estimates(&[german], &[false], &[0], "balanced").unwrap();
        let (_, with) = estimates(
            &[german, english, english, english],
            &[false; 4],
            &[0; 4],
            "balanced",
        )
        .unwrap();
        assert_eq!(alone[0], 31);
        assert_eq!(with[0], 16);
    }
}
