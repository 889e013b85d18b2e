//! The splitting of oversized blocks (chunkmill-core's `split`), one block per call.
//! Offsets cross in code points (Python str indices). A counter is either the estimate's
//! parameters `(bias, code, english_document)`, counted natively without the interpreter,
//! or a Python callable `count(list[str]) -> list[int]` (a real tokenizer), called with the
//! interpreter held, in the same batches as the Python code made.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::chunk::split::{self as core, byte_offsets, char_offsets, Piece};
use chunkmill_core::tokens::counter::{Counter, Estimate};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyList;

/// Counts through a closure: the native estimate or a Python callable.
struct Counting<'a>(&'a mut dyn FnMut(&[&str]) -> PyResult<Vec<i64>>);

impl Counter for Counting<'_> {
    type Error = PyErr;

    fn count(&mut self, texts: &[&str]) -> PyResult<Vec<i64>> {
        (self.0)(texts)
    }
}

/// `count(texts)` of a Python callable, which must give one int per text.
fn call(count: &Bound<'_, PyAny>, texts: &[&str]) -> PyResult<Vec<i64>> {
    let out = count.call1((PyList::new(count.py(), texts)?,))?;
    let counts = out
        .try_iter()?
        .map(|n| n?.extract::<i64>())
        .collect::<PyResult<Vec<i64>>>()?;
    if counts.len() != texts.len() {
        return Err(PyValueError::new_err(format!(
            "count gave {} counts for {} texts",
            counts.len(),
            texts.len()
        )));
    }
    Ok(counts)
}

/// Runs `work` with the counter `counter` stands for: a tuple (bias, code,
/// english_document) is the estimate, counted without the interpreter; anything else is
/// called as `count(list[str])`. A panic becomes a RuntimeError.
fn counted<T: Send>(
    py: Python<'_>,
    name: &str,
    counter: &Bound<'_, PyAny>,
    work: impl Fn(&mut Counting) -> PyResult<T> + Sync,
) -> PyResult<T> {
    let failed =
        || PyRuntimeError::new_err(format!("{name}: the Rust core failed (a bug in chunkmill)"));
    if let Ok((bias, code, english)) = counter.extract::<(String, bool, Option<bool>)>() {
        let mut estimate = Estimate::new(&bias, code, english)
            .ok_or_else(|| PyValueError::new_err(format!("{name}: unknown bias {bias:?}")))?;
        return py
            .detach(|| {
                let mut f =
                    |texts: &[&str]| Ok(estimate.count(texts).unwrap_or_else(|n| match n {}));
                catch_unwind(AssertUnwindSafe(|| work(&mut Counting(&mut f))))
            })
            .map_err(|_| failed())?;
    }
    let mut f = |texts: &[&str]| call(counter, texts);
    catch_unwind(AssertUnwindSafe(|| work(&mut Counting(&mut f)))).map_err(|_| failed())?
}

/// Byte offsets of code-point offsets a and b of `text` (clamped to it, b >= a).
fn range(text: &str, a: i64, b: i64) -> (usize, usize) {
    let at = byte_offsets(text, &[a, b]);
    (at[0], at[1].max(at[0]))
}

/// Pieces as columns: texts, starts, ends (code points), tokens.
type PieceColumns = (Vec<String>, Vec<usize>, Vec<usize>, Vec<i64>);

/// Pieces of one block that alone exceeds `budget` tokens (split.split_block), as columns:
/// (texts, starts, ends, tokens), offsets in code points of `text`.
#[pyfunction]
#[pyo3(signature = (kind, text, budget, group_tokens, counter, item_starts=None))]
fn split_block(
    py: Python<'_>,
    kind: &str,
    text: PyBackedStr,
    budget: i64,
    group_tokens: i64,
    counter: &Bound<'_, PyAny>,
    item_starts: Option<Vec<i64>>,
) -> PyResult<PieceColumns> {
    let text: &str = &text;
    let starts = byte_offsets(text, &item_starts.unwrap_or_default());
    let pieces = counted(py, "split_block", counter, |count| {
        core::split_block(kind, text, budget, group_tokens, count, &starts)
    })?;
    let bounds: Vec<usize> = pieces.iter().flat_map(|p| [p.start, p.end]).collect();
    let bounds = char_offsets(text, &bounds);
    let (starts, ends) = bounds.chunks_exact(2).map(|b| (b[0], b[1])).unzip();
    let tokens = pieces.iter().map(|p| p.tokens).collect();
    let texts = pieces.into_iter().map(|p: Piece| p.text).collect();
    Ok((texts, starts, ends, tokens))
}

/// (start, end) code-point offsets of `spans` (byte offsets) of `text`.
fn char_spans(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let flat: Vec<usize> = spans.iter().flat_map(|&(a, b)| [a, b]).collect();
    char_offsets(text, &flat)
        .chunks_exact(2)
        .map(|b| (b[0], b[1]))
        .collect()
}

/// Character cuts of text[a:b] within `budget` (split._chars).
#[pyfunction]
fn split_chars(
    py: Python<'_>,
    text: PyBackedStr,
    a: i64,
    b: i64,
    budget: i64,
    counter: &Bound<'_, PyAny>,
) -> PyResult<Vec<(usize, usize)>> {
    let text: &str = &text;
    let (a, b) = range(text, a, b);
    let spans = counted(py, "split_chars", counter, |count| {
        core::chars(text, a, b, budget, count)
    })?;
    Ok(char_spans(text, &spans))
}

/// The sentences of text[s:e], trimmed (split._sentences).
#[pyfunction]
fn split_sentences(text: PyBackedStr, s: i64, e: i64) -> Vec<(usize, usize)> {
    let (s, e) = range(&text, s, e);
    char_spans(&text, &core::sentences(&text, s, e))
}

/// Offsets a, ..., b of the grapheme cluster boundaries of text[a:b] (split.graphemes).
#[pyfunction]
fn split_graphemes(text: PyBackedStr, a: i64, b: i64) -> Vec<usize> {
    let (a, b) = range(&text, a, b);
    char_offsets(&text, &core::graphemes(&text, a, b))
}

/// The whitespace text[a:b] between two pieces as a chunk holds it (split.gap).
#[pyfunction]
#[pyo3(signature = (text, a, b, limit=core::MAX_GAP))]
fn split_gap(text: PyBackedStr, a: i64, b: i64, limit: usize) -> String {
    let (a, b) = range(&text, a, b);
    core::gap(&text, a, b, limit).into_owned()
}

/// Whitespace longer than this is shortened between pieces (split.gap_limit).
#[pyfunction]
fn split_gap_limit(budget: i64) -> usize {
    core::gap_limit(budget)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(split_block, m)?)?;
    m.add_function(wrap_pyfunction!(split_chars, m)?)?;
    m.add_function(wrap_pyfunction!(split_sentences, m)?)?;
    m.add_function(wrap_pyfunction!(split_graphemes, m)?)?;
    m.add_function(wrap_pyfunction!(split_gap, m)?)?;
    m.add_function(wrap_pyfunction!(split_gap_limit, m)?)?;
    m.add("SPLIT_MAX_GAP", core::MAX_GAP)?;
    Ok(())
}
