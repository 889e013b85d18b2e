//! Exact token counts of OpenAI's byte-pair encodings, cl100k_base and o200k_base, without
//! an interpreter: the `bpe-openai` crate's tokenizers (their vocabularies are compiled in,
//! nothing is read or downloaded at run time). A count is that of tiktoken's
//! `encode_ordinary`: special tokens such as `<|endoftext|>` count as the text they are.
//! Behind the `encodings` feature (the Python extension's); its tests are the extension's,
//! against tiktoken itself (tests/test_encodings.py). A policy names it through `exact`.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

/// One of the encodings the core counts natively.
#[derive(Clone, Copy)]
pub struct Encoding {
    tokenizer: &'static bpe_openai::Tokenizer,
    /// its index in NAMES (its table of remembered pieces)
    index: usize,
}

impl std::fmt::Debug for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encoding")
    }
}

/// The names `named` knows.
pub const NAMES: [&str; 2] = ["cl100k_base", "o200k_base"];

/// The longest piece whose count a thread remembers, in bytes, and how many it remembers
/// (then it forgets them all: memory stays bounded, a few MB a thread).
const MEMO_BYTES: usize = 32;
const MEMO_PIECES: usize = 1 << 16;

thread_local! {
    /// Per encoding (NAMES' order): piece -> its count.
    static MEMO: RefCell<[FxHashMap<Box<[u8]>, u32>; 2]> = RefCell::new(Default::default());
}

impl Encoding {
    /// The encoding of this name; None for another name.
    pub fn named(name: &str) -> Option<Encoding> {
        let (tokenizer, index) = match name {
            "cl100k_base" => (bpe_openai::cl100k_base(), 0),
            "o200k_base" => (bpe_openai::o200k_base(), 1),
            _ => return None,
        };
        Some(Encoding { tokenizer, index })
    }

    /// The tokens of `text`: the sum over the pieces the encoding's split pattern cuts it
    /// into (as tiktoken counts), a short piece's count remembered by the thread (words
    /// repeat: most pieces of a text were counted before, and a lookup costs a fraction of
    /// the byte-pair encoding's work and allocations).
    pub fn count(&self, text: &str) -> i64 {
        let bpe = &self.tokenizer.bpe;
        MEMO.with(|memo| {
            let mut memo = memo.borrow_mut();
            let memo = &mut memo[self.index];
            let mut n = 0;
            for piece in self.tokenizer.split(text) {
                let bytes = piece.as_bytes();
                n += if bytes.len() > MEMO_BYTES {
                    bpe.count(bytes)
                } else if let Some(&k) = memo.get(bytes) {
                    k as usize
                } else {
                    let k = bpe.count(bytes);
                    if memo.len() >= MEMO_PIECES {
                        memo.clear();
                    }
                    memo.insert(bytes.into(), k as u32);
                    k
                };
            }
            n as i64
        })
    }
}
