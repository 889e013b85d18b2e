//! chunk_document over a batch: the counters a document is chunked with (the estimate's,
//! a Python tokenizer's), the documents spread over threads, a panic caught, a counter's
//! failure made text.

use std::convert::Infallible;
use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::chunk::{chunk_document, Block, Counting, Doc, DocChunks, Failure, Policy};
use chunkmill_core::threads;
use chunkmill_core::tokens::estimate::{estimate, EnglishDocument};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The weights of one bias and group.
pub(crate) type Weights = [f64; 23];

/// The estimate of one document's texts: prose weights judged by the document's language,
/// code weights by each text alone (chunk.Counting.for_document and for_kind).
struct Estimate {
    prose: Weights,
    code: Weights,
    english: EnglishDocument,
}

impl Counting for Estimate {
    type Error = Infallible;
    fn count(&mut self, code: bool, texts: &[&str]) -> Result<Vec<i64>, Infallible> {
        let (w, english) = match code {
            true => (&self.code, None),
            false => (&self.prose, self.english),
        };
        Ok(texts.iter().map(|t| estimate(t, w, english)).collect())
    }
    fn added(&self) -> i64 {
        0
    }
    fn is_estimate(&self) -> bool {
        true
    }
}

/// A real tokenizer: the Python callable `count(list[str]) -> list[int]` (the GIL held).
pub(super) struct Tokenizer<'py> {
    pub(super) count: Bound<'py, PyAny>,
    pub(super) added: i64,
}

impl Counting for Tokenizer<'_> {
    type Error = PyErr;
    fn count(&mut self, _code: bool, texts: &[&str]) -> PyResult<Vec<i64>> {
        let out: Vec<i64> = self.count.call1((texts.to_vec(),))?.extract()?;
        if out.len() != texts.len() {
            return Err(PyValueError::new_err(
                "count returned a list of another length",
            ));
        }
        Ok(out)
    }
    fn added(&self) -> i64 {
        self.added
    }
    fn is_estimate(&self) -> bool {
        false
    }
}

/// Every document chunked under the estimate, which needs no interpreter (`english[d]`:
/// whether document d reads as English): `chunk_natively` with the estimate's counter.
#[allow(clippy::too_many_arguments)] // the parts of one batch, as both callers hold them
pub(crate) fn chunk_estimated<'a>(
    py: Python<'_>,
    doc: &(dyn Fn(usize) -> Doc<'a> + Sync),
    all: &[Block],
    starts: &[(usize, usize)],
    english: &[Option<bool>],
    policy: &Policy,
    (prose, code): (Weights, Weights),
    threads: usize,
) -> Vec<Result1> {
    let counter = |d: usize| Estimate {
        prose,
        code,
        english: english[d],
    };
    chunk_natively(py, doc, all, starts, policy, &counter, threads)
}

/// Every document chunked with a counter that needs no interpreter (`counter(d)`: document
/// d's): the documents are spread over threads (contiguous ranges by text size, results
/// in document order: the same for any number). `doc(d)`: document d; `starts[d]`: its
/// rows of `all`.
pub(crate) fn chunk_natively<'a, C: Counting<Error: std::fmt::Display>>(
    py: Python<'_>,
    doc: &(dyn Fn(usize) -> Doc<'a> + Sync),
    all: &[Block],
    starts: &[(usize, usize)],
    policy: &Policy,
    counter: &(dyn Fn(usize) -> C + Sync),
    threads: usize,
) -> Vec<Result1> {
    let sizes: Vec<usize> = (0..starts.len()).map(|d| doc(d).text.len()).collect();
    let ranges = threads::ranges(&sizes, threads);
    py.detach(|| {
        threads::map(&ranges, |range| {
            range
                .map(|d| {
                    let mut counting = counter(d);
                    guarded(|| {
                        chunk_document(
                            &doc(d),
                            &all[starts[d].0..starts[d].1],
                            policy,
                            &mut counting,
                        )
                    })
                    .map(|r| r.map_err(|f| f.map_count(|e| e.to_string())))
                })
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect()
    })
}

/// `f()`, None when it panicked.
pub(crate) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

/// What one document gave, its counter's failure already made text.
pub(crate) type Result1 = Option<Result<DocChunks, Failure<String>>>;

pub(super) trait MapCount<E> {
    fn map_count<F>(self, f: impl FnOnce(E) -> F) -> Failure<F>;
}

impl<E> MapCount<E> for Failure<E> {
    fn map_count<F>(self, f: impl FnOnce(E) -> F) -> Failure<F> {
        match self {
            Failure::OverCap(s) => Failure::OverCap(s),
            Failure::Internal(s) => Failure::Internal(s),
            Failure::Count(e) => Failure::Count(f(e)),
        }
    }
}
