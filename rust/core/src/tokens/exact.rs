//! The exact counters the core runs by itself, named as a policy names them: an OpenAI
//! encoding (`cl100k_base`, `o200k_base`), a Hugging Face tokenizer (`hf:PATH`), or several
//! of them at once, comma-separated (`cl100k_base,hf:PATH`), which counts so that a text
//! within a cap in it is within that cap in each of them.

use std::ops::Range;
use std::sync::Arc;

use crate::chunk::Counting;
use crate::threads;
use crate::tokens::encoding::{Encoding, NAMES};
use crate::tokens::hf::Hf;

/// An exact counter.
#[derive(Debug, Clone)]
pub enum Exact {
    Encoding(Encoding),
    Hf(Arc<Hf>),
    /// Several counters: a piece's count is the largest of theirs, `added` the most any
    /// model adds, so that the sum over the pieces of an input and `added` is never less
    /// than what any of the models reads of it; an input's count (`input`) is the most any
    /// of them reads.
    Several(Arc<[Exact]>),
}

impl Exact {
    /// The counter `spec` names; an error says why there is none. A comma starts another
    /// counter only where a name follows it (`hf:`, or an encoding's name): a path may hold
    /// commas.
    pub fn named(spec: &str) -> Result<Exact, String> {
        let names = names_in(spec);
        if names.len() > 1 {
            let each = names
                .into_iter()
                .map(Exact::one)
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Exact::Several(each.into()));
        }
        Exact::one(spec)
    }

    fn one(spec: &str) -> Result<Exact, String> {
        if let Some(path) = spec.strip_prefix("hf:") {
            return Hf::load(path).map(Exact::Hf);
        }
        Encoding::named(spec)
            .map(Exact::Encoding)
            .ok_or_else(|| format!("unknown encoding {spec:?}: {} or hf:PATH", NAMES.join(", ")))
    }

    /// The tokens of `text` as a piece of an input, without those the model adds around
    /// the input (`added`).
    pub fn count(&self, text: &str) -> Result<i64, String> {
        match self {
            Exact::Encoding(e) => Ok(e.count(text)),
            Exact::Hf(h) => h.count(text),
            Exact::Several(each) => each
                .iter()
                .try_fold(0, |most, e| Ok(most.max(e.count(text)?))),
        }
    }

    /// What the model reads of `text` as a whole input: its tokens and those it adds
    /// around it (several models: the most any of them reads).
    pub fn input(&self, text: &str) -> Result<i64, String> {
        match self {
            Exact::Several(each) => each
                .iter()
                .try_fold(0, |most, e| Ok(most.max(e.input(text)?))),
            _ => Ok(self.count(text)? + self.added()),
        }
    }

    /// Tokens the model adds around every input ([CLS] and [SEP]).
    pub fn added(&self) -> i64 {
        match self {
            Exact::Encoding(_) => 0,
            Exact::Hf(h) => h.added(),
            Exact::Several(each) => each.iter().map(Exact::added).max().unwrap_or(0),
        }
    }

    /// The tokens of every text, as pieces (`count`) or as whole inputs less `added`
    /// (`whole`: with `added`, what the model reads), spread over `threads` threads by
    /// size (the same counts for any number); the first error if a text cannot be counted.
    pub fn count_all(
        &self,
        texts: &[&str],
        threads: usize,
        whole: bool,
    ) -> Result<Vec<i64>, String> {
        let sizes: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let ranges: Vec<Range<usize>> = threads::ranges(&sizes, threads);
        let one = |t: &str| match whole {
            true => Ok(self.input(t)? - self.added()),
            false => self.count(t),
        };
        threads::map(&ranges, |r| {
            texts[r]
                .iter()
                .map(|t| one(t))
                .collect::<Result<Vec<_>, _>>()
        })
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map(|parts| parts.into_iter().flatten().collect())
    }
}

/// The names in a list of them: `spec` cut at each comma that a name follows.
fn names_in(spec: &str) -> Vec<&str> {
    let starts_a_name =
        |rest: &str| rest.starts_with("hf:") || NAMES.iter().any(|n| rest.starts_with(n));
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in spec.match_indices(',') {
        if starts_a_name(&spec[i + 1..]) {
            out.push(&spec[start..i]);
            start = i + 1;
        }
    }
    out.push(&spec[start..]);
    out
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
    fn count_inputs(&mut self, texts: &[&str]) -> Result<Vec<i64>, String> {
        texts.iter().map(|t| self.input(t)).collect()
    }
}
