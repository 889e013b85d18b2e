//! Exact token counts of a Hugging Face tokenizer (a `tokenizer.json` file, read from a
//! path: nothing is downloaded): the `tokenizers` crate's `encode` without special tokens,
//! as the Python package counts; the tokens the model adds around an input ([CLS] and
//! [SEP]: its post-processor's) are `added`.
//!
//! A BERT-style WordPiece tokenizer (BertNormalizer, BertPreTokenizer, WordPiece)
//! normalizes each character by itself and cuts the normalized text at whitespace, around
//! punctuation and around CJK ideographs; none of those characters is changed into another
//! kind by its normalizer. So a text's count is the sum of its pieces' counts, the pieces
//! being cut at those characters of the text itself: a piece's count is remembered by the
//! tokenizer, for every thread and batch of the process (pieces repeat; encoding one costs
//! about 15 µs, a lookup a fraction of a microsecond). A word that holds one of the
//! tokenizer's added tokens (`[CLS]`, whose brackets are punctuation) is encoded whole. Any
//! other tokenizer encodes every text whole.
//!
//! Behind the `encodings` feature (the Python extension's); its tests are the extension's,
//! against the tokenizers package itself (tests/test_hf_counts.py).

use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustc_hash::{FxBuildHasher, FxHashMap};
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{PostProcessor, Tokenizer};
use unicode_categories::UnicodeCategories;

/// A loaded tokenizer.
pub struct Hf {
    tokenizer: Tokenizer,
    /// tokens its post-processor adds around one input
    added: i64,
    /// the pieces of a BERT-style tokenizer (None: texts are counted whole)
    bert: Option<Bert>,
    /// piece -> its count, in shards by the word's hash (threads seldom wait for each other)
    memo: [Mutex<FxHashMap<Box<str>, u32>>; SHARDS],
}

impl std::fmt::Debug for Hf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hf")
    }
}

/// Where a BERT-style tokenizer's counts are sums.
#[derive(Debug)]
struct Bert {
    /// cuts a text into words (its whitespace; `clean_text` deletes the control characters
    /// among whitespace, vertical tab, form feed and next line, rather than cutting there)
    cut: fn(char) -> bool,
    /// cuts a word into pieces, each such character a piece of its own: punctuation, and
    /// CJK ideographs where the normalizer sets them apart
    isolated: fn(char) -> bool,
    /// the added tokens' texts: a word that holds one is encoded whole
    added: Vec<String>,
}

/// The longest piece whose count is remembered, in bytes, and how many a shard remembers
/// (then it forgets them all: memory stays bounded, about 15 MB a tokenizer). The shared
/// corpora hold about 100,000 distinct pieces.
const MEMO_BYTES: usize = 256;
const SHARDS: usize = 16;
const MEMO_WORDS: usize = (1 << 18) / SHARDS;

/// A file as loaded: its path, length and modification time, and the tokenizer.
type Loaded = (PathBuf, u64, Option<SystemTime>, Arc<Hf>);

/// The tokenizers loaded by this process: a batch names its tokenizer by path, and a file
/// is read and parsed once while it stays the same (its length and modification time).
static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

impl Hf {
    /// The tokenizer of the `tokenizer.json` at `path`, loaded once per process while the
    /// file stays the same; an error says why it does not load.
    pub fn load(path: &str) -> Result<Arc<Hf>, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
        let (len, modified) = (meta.len(), meta.modified().ok());
        let mut loaded = lock(&LOADED);
        let same = |l: &&Loaded| l.0 == Path::new(path) && l.1 == len && l.2 == modified;
        if let Some(l) = loaded.iter().find(same) {
            return Ok(l.3.clone());
        }
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        let hf = Arc::new(Hf::from_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?);
        loaded.retain(|l| l.0 != Path::new(path));
        loaded.push((path.into(), len, modified, hf.clone()));
        Ok(hf)
    }

    /// The tokenizer a `tokenizer.json`'s bytes define, without the padding and
    /// truncation it may carry (MiniLM's pads and truncates to 128): counting wants neither.
    pub fn from_bytes(bytes: &[u8]) -> Result<Hf, String> {
        let mut tokenizer = Tokenizer::from_bytes(bytes)
            .map_err(|e| format!("not a tokenizer.json that loads: {e}"))?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| format!("not a tokenizer.json that loads: {e}"))?;
        tokenizer.with_padding(None);
        let added = tokenizer
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false) as i64);
        let bert = bert(&tokenizer);
        Ok(Hf {
            tokenizer,
            added,
            bert,
            memo: Default::default(),
        })
    }

    /// Tokens the model adds around every input.
    pub fn added(&self) -> i64 {
        self.added
    }

    /// The tokens of `text`, special tokens not added (`added` are the model's).
    pub fn count(&self, text: &str) -> Result<i64, String> {
        let Some(bert) = &self.bert else {
            return self.encoded(text);
        };
        let mut n = 0;
        for word in text.split(bert.cut).filter(|w| !w.is_empty()) {
            n += self.pieces(bert, word)?;
        }
        Ok(n)
    }

    /// The tokens of a word: the sum of its pieces', or its own where it is one piece or
    /// holds an added token (which may span pieces: `[CLS]`).
    fn pieces(&self, bert: &Bert, word: &str) -> Result<i64, String> {
        let encoded = |p: &str| self.encoded(p);
        let one_piece = !word.chars().any(bert.isolated);
        if one_piece || bert.added.iter().any(|a| word.contains(a.as_str())) {
            return self.remembered(word, encoded);
        }
        let (mut n, mut start) = (0, 0);
        for (i, c) in word.char_indices() {
            if (bert.isolated)(c) {
                let end = i + c.len_utf8();
                for piece in [&word[start..i], &word[i..end]] {
                    if !piece.is_empty() {
                        n += self.remembered(piece, encoded)?;
                    }
                }
                start = end;
            }
        }
        if start < word.len() {
            n += self.remembered(&word[start..], encoded)?;
        }
        Ok(n)
    }

    /// The count of a piece (or word), remembered when it is short.
    fn remembered(
        &self,
        key: &str,
        count: impl FnOnce(&str) -> Result<i64, String>,
    ) -> Result<i64, String> {
        if key.len() > MEMO_BYTES {
            return count(key);
        }
        // a shard by middle bits of the hash: the map's buckets take its low bits, its tags
        // the top seven
        let shard = &self.memo[(FxBuildHasher.hash_one(key) >> 32) as usize % SHARDS];
        if let Some(&k) = lock(shard).get(key) {
            return Ok(i64::from(k));
        }
        let k = count(key)?; // the shard is not held while it is counted
        let mut memo = lock(shard);
        if memo.len() >= MEMO_WORDS {
            memo.clear();
        }
        memo.insert(key.into(), k as u32);
        Ok(k)
    }

    fn encoded(&self, text: &str) -> Result<i64, String> {
        self.tokenizer
            .encode_fast(text, false)
            .map(|e| e.len() as i64)
            .map_err(|e| e.to_string())
    }
}

/// A shard of the memo (a panic elsewhere while it was held left it whole: entries are
/// inserted complete).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a BERT-style tokenizer's counts are sums (None for any other tokenizer, or one
/// whose added tokens hold whitespace or match normalized text).
fn bert(tokenizer: &Tokenizer) -> Option<Bert> {
    let Some(NormalizerWrapper::BertNormalizer(normalizer)) = tokenizer.get_normalizer() else {
        return None;
    };
    let pipeline = matches!(
        tokenizer.get_pre_tokenizer(),
        Some(PreTokenizerWrapper::BertPreTokenizer(_))
    ) && matches!(tokenizer.get_model(), ModelWrapper::WordPiece(_));
    let tokens = tokenizer.get_added_tokens_decoder();
    let plain = tokens
        .values()
        .all(|t| !t.normalized && !t.content.contains(char::is_whitespace));
    if !(pipeline && plain) {
        return None;
    }
    let cut: fn(char) -> bool = match normalizer.clean_text {
        true => |c| c.is_whitespace() && (!c.is_control() || "\t\n\r".contains(c)),
        false => char::is_whitespace,
    };
    let isolated: fn(char) -> bool = match normalizer.handle_chinese_chars {
        true => |c| is_punctuation(c) || is_cjk_ideograph(c),
        false => is_punctuation,
    };
    let added = tokens
        .into_values()
        .map(|t| t.content)
        .filter(|c| !c.is_empty());
    Some(Bert {
        cut,
        isolated,
        added: added.collect(),
    })
}

/// Punctuation as BertPreTokenizer sees it: ASCII punctuation and Unicode's P* categories
/// (by the tables the tokenizers crate itself uses; the P* characters of ASCII are ASCII
/// punctuation, so an ASCII character is looked up in no table).
fn is_punctuation(c: char) -> bool {
    match c.is_ascii() {
        true => c.is_ascii_punctuation(),
        false => c.is_punctuation(),
    }
}

/// The CJK ideograph blocks BertNormalizer sets apart (`handle_chinese_chars`).
fn is_cjk_ideograph(c: char) -> bool {
    matches!(
        u32::from(c),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}
