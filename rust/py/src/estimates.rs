//! chunkmill._core.estimates, english_documents and estimate_tokens: the token estimate of
//! a table of texts, whether each text's document reads as English, and the estimate of
//! single texts (tokens.EstimateCounter).

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::tokens::counter::{Counter, Estimate};
use chunkmill_core::tokens::estimate::{
    english_documents as core_english, estimates as core_estimates,
};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyBytes;

use crate::strings::{self, buffer};

/// The rows of a table of texts: `text` and `offsets` (n + 1 int64 from 0, native order)
/// hold them as UTF-8 (an Arrow large_string column; `text` any buffer, read in place), `group` one uint32 per text (its
/// document, numbered from 0).
fn rows<'a>(
    name: &str,
    text: &'a [u8],
    offsets: &[u8],
    group: &[u8],
    n: usize,
) -> PyResult<(Vec<&'a str>, Vec<u32>)> {
    let fail = |why: &str| PyValueError::new_err(format!("{name}: {why}"));
    if offsets.len() != 8 * (n + 1) || group.len() != 4 * n {
        return Err(fail("offsets and group differ in length from the rows"));
    }
    let all = std::str::from_utf8(text).map_err(|_| fail("text is not UTF-8"))?;
    let at = |i: usize| i64::from_ne_bytes(offsets[8 * i..8 * i + 8].try_into().unwrap());
    let mut texts = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (at(i), at(i + 1));
        let row = usize::try_from(a)
            .ok()
            .zip(usize::try_from(b).ok())
            .and_then(|(a, b)| all.get(a..b));
        texts.push(row.ok_or_else(|| fail("an offset is out of bounds"))?);
    }
    let group = group
        .chunks_exact(4)
        .map(|g| u32::from_ne_bytes(g.try_into().unwrap()))
        .collect();
    Ok((texts, group))
}

/// (n_chars, est_tokens) of a table of texts (`rows`) as two int32 buffers: `code` one
/// byte per text (non-zero: a code-like kind, the code weights), `bias` a BIAS_FACTORS
/// name.
#[pyfunction]
fn estimates<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    offsets: PyBackedBytes,
    code: PyBackedBytes,
    group: PyBackedBytes,
    bias: &str,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let text = PyUntypedBuffer::get(text)?;
    let (texts, group) = rows(
        "estimates",
        strings::bytes_of(&text)?,
        &offsets,
        &group,
        code.len(),
    )?;
    let code: Vec<bool> = code.iter().map(|&c| c != 0).collect();
    let bias = bias.to_owned();
    let out = py
        .detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                core_estimates(&texts, &code, &group, &bias)
            }))
        })
        .map_err(|_| {
            PyRuntimeError::new_err("estimates: the Rust core failed (a bug in chunkmill)")
        })?;
    let (n_chars, est) =
        out.ok_or_else(|| PyValueError::new_err(format!("estimates: unknown bias {bias:?}")))?;
    Ok((
        buffer(py, &n_chars, i32::to_ne_bytes),
        buffer(py, &est, i32::to_ne_bytes),
    ))
}

/// One byte per text of a table (`rows`, `n` of them): 1 when its document reads as
/// English over all its texts (the chunk stage's counters of pieces).
#[pyfunction]
fn english_documents<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    offsets: PyBackedBytes,
    group: PyBackedBytes,
    n: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let text = PyUntypedBuffer::get(text)?;
    let (texts, group) = rows(
        "english_documents",
        strings::bytes_of(&text)?,
        &offsets,
        &group,
        n,
    )?;
    let out = py
        .detach(|| catch_unwind(AssertUnwindSafe(|| core_english(&texts, &group))))
        .map_err(|_| {
            PyRuntimeError::new_err("english_documents: the Rust core failed (a bug in chunkmill)")
        })?;
    Ok(buffer(py, &out, |b: bool| [b as u8]))
}

/// The estimate of each of `texts`, with `bias`'s weights for prose, or for code-like
/// kinds with `code`; `english_document`: whether the texts' document reads as English
/// (None: each text is judged alone).
#[pyfunction]
#[pyo3(signature = (texts, bias, code=false, english_document=None))]
fn estimate_tokens(
    py: Python<'_>,
    texts: Vec<PyBackedStr>,
    bias: &str,
    code: bool,
    english_document: Option<bool>,
) -> PyResult<Vec<i64>> {
    let mut counter = Estimate::new(bias, code, english_document)
        .ok_or_else(|| PyValueError::new_err(format!("estimate_tokens: unknown bias {bias:?}")))?;
    let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
    py.detach(|| catch_unwind(AssertUnwindSafe(|| counter.count(&texts))))
        .map_err(|_| {
            PyRuntimeError::new_err("estimate_tokens: the Rust core failed (a bug in chunkmill)")
        })?
        .map_err(|never| match never {})
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(estimates, m)?)?;
    m.add_function(wrap_pyfunction!(english_documents, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_tokens, m)?)?;
    Ok(())
}
