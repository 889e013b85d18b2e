//! The postings stage's terms: a string column comes in as its Arrow buffers (read in
//! place through the buffer protocol, no Python string per text), the rows go out as
//! Arrow-ready buffers in native byte order.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::postings::{postings as core_postings, terms as core_terms, Terms};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::strings::{buffer, bytes_of, texts};

/// Runs `work` over the texts without the interpreter, a panic raised as RuntimeError.
fn run<T: Send>(
    py: Python<'_>,
    name: &str,
    data: &Bound<'_, PyAny>,
    offsets: &Bound<'_, PyAny>,
    wide: bool,
    n: usize,
    work: impl FnOnce(&[&str]) -> T + Send,
) -> PyResult<T> {
    let data = PyUntypedBuffer::get(data)?;
    let offsets = PyUntypedBuffer::get(offsets)?;
    let texts = texts(name, bytes_of(&data)?, bytes_of(&offsets)?, wide, n)?;
    py.detach(|| catch_unwind(AssertUnwindSafe(|| work(&texts))))
        .map_err(|_| {
            PyRuntimeError::new_err(format!("{name}: the Rust core failed (a bug in chunkmill)"))
        })
}

type Column<'py> = Bound<'py, PyBytes>;

fn term_columns<'py>(py: Python<'py>, t: &Terms) -> (Column<'py>, Column<'py>, Column<'py>) {
    (
        PyBytes::new(py, &t.text),
        buffer(py, &t.offsets, i64::to_ne_bytes),
        buffer(py, &t.row, u32::to_ne_bytes),
    )
}

/// The postings rows of `n` texts (see `texts`): term (UTF-8 bytes and n + 1 int64
/// offsets), row (uint32: the text's index), tf and doc_len (int32): one row per distinct
/// (text, term), texts in order, a text's terms in the order of first occurrence.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn postings<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    wide: bool,
    n: usize,
) -> PyResult<(
    Column<'py>,
    Column<'py>,
    Column<'py>,
    Column<'py>,
    Column<'py>,
)> {
    let out = run(py, "postings", data, offsets, wide, n, |texts| {
        core_postings(texts.iter().copied())
    })?;
    let (term, term_offsets, row) = term_columns(py, &out.terms);
    Ok((
        term,
        term_offsets,
        row,
        buffer(py, &out.tf, i32::to_ne_bytes),
        buffer(py, &out.doc_len, i32::to_ne_bytes),
    ))
}

/// Every term of `n` texts (see `texts`), occurrence by occurrence: term (UTF-8 bytes and
/// n + 1 int64 offsets) and row (uint32: the text's index).
#[pyfunction]
fn terms<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    wide: bool,
    n: usize,
) -> PyResult<(Column<'py>, Column<'py>, Column<'py>)> {
    let out = run(py, "terms", data, offsets, wide, n, |texts| {
        core_terms(texts.iter().copied())
    })?;
    Ok(term_columns(py, &out))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(postings, m)?)?;
    m.add_function(wrap_pyfunction!(terms, m)?)?;
    Ok(())
}
