//! The exact counters the core runs by itself, named as a policy names them: an OpenAI
//! encoding (`cl100k_base`, `o200k_base`) or a Hugging Face tokenizer (`hf:PATH`).

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::Counting;
use crate::encoding::{Encoding, NAMES};
use crate::hf::Hf;
use crate::threads;

/// An exact counter.
#[derive(Debug, Clone)]
pub enum Exact {
    Encoding(Encoding),
    Hf(Arc<Hf>),
}

impl Exact {
    /// The counter `spec` names; an error says why there is none.
    pub fn named(spec: &str) -> Result<Exact, String> {
        if let Some(path) = spec.strip_prefix("hf:") {
            return Hf::load(path).map(Exact::Hf);
        }
        Encoding::named(spec)
            .map(Exact::Encoding)
            .ok_or_else(|| format!("unknown encoding {spec:?}: {} or hf:PATH", NAMES.join(", ")))
    }

    /// The tokens of `text`, without those the model adds around an input (`added`).
    pub fn count(&self, text: &str) -> Result<i64, String> {
        match self {
            Exact::Encoding(e) => Ok(e.count(text)),
            Exact::Hf(h) => h.count(text),
        }
    }

    /// Tokens the model adds around every input ([CLS] and [SEP]).
    pub fn added(&self) -> i64 {
        match self {
            Exact::Encoding(_) => 0,
            Exact::Hf(h) => h.added(),
        }
    }

    /// The tokens of every text, spread over `threads` threads by size (the same counts for
    /// any number); the first error if a text cannot be counted.
    pub fn count_all(&self, texts: &[&str], threads: usize) -> Result<Vec<i64>, String> {
        let sizes: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let ranges: Vec<Range<usize>> = threads::ranges(&sizes, threads);
        threads::map(&ranges, |r| {
            texts[r]
                .iter()
                .map(|t| self.count(t))
                .collect::<Result<Vec<_>, _>>()
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map(|parts| parts.into_iter().flatten().collect())
    }
}

/// A chunk's counts: every kind alike.
impl Counting for Exact {
    type Error = String;

    fn count(&mut self, _code: bool, texts: &[&str]) -> Result<Vec<i64>, String> {
        texts.iter().map(|t| Exact::count(self, t)).collect()
    }
    fn added(&self) -> i64 {
        Exact::added(self)
    }
    fn is_estimate(&self) -> bool {
        false
    }
}
