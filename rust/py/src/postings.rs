//! The postings stage's terms: a string column comes in as its Arrow buffers (read in
//! place through the buffer protocol, no Python string per text), the rows go out as
//! Arrow-ready buffers in native byte order.

use std::panic::{catch_unwind, AssertUnwindSafe};

use mdchunk_core::postings::{postings as core_postings, terms as core_terms, Terms};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The bytes of a C-contiguous buffer (an Arrow `pa.Buffer`, `bytes`, ...).
fn bytes_of(buffer: &PyUntypedBuffer) -> PyResult<&[u8]> {
    if !buffer.is_c_contiguous() {
        return Err(PyValueError::new_err("a buffer is not contiguous"));
    }
    if buffer.len_bytes() == 0 {
        return Ok(&[]);
    }
    // SAFETY: the buffer stays acquired (its exporter keeps the memory) while `buffer`
    // lives, and the slice borrows `buffer`. Arrow buffers are immutable once built.
    Ok(unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes()) })
}

/// The `n` texts of an Arrow string column: `data` its UTF-8 bytes, `offsets` its n + 1
/// offsets into them (int64 when `wide`, int32 otherwise; native order), already sliced
/// to the array's first row.
fn texts<'a>(data: &'a [u8], offsets: &[u8], wide: bool, n: usize) -> PyResult<Vec<&'a str>> {
    let fail = |why: &str| PyValueError::new_err(format!("postings: {why}"));
    let width = if wide { 8 } else { 4 };
    if offsets.len() < width * (n + 1) {
        return Err(fail("fewer offsets than rows"));
    }
    let at = |i: usize| -> Option<usize> {
        let b = &offsets[width * i..width * (i + 1)];
        if wide {
            usize::try_from(i64::from_ne_bytes(b.try_into().unwrap())).ok()
        } else {
            usize::try_from(i32::from_ne_bytes(b.try_into().unwrap())).ok()
        }
    };
    let (first, last) = at(0).zip(at(n)).ok_or_else(|| fail("a negative offset"))?;
    let span = data
        .get(first..last)
        .ok_or_else(|| fail("an offset is out of bounds"))?;
    let all = std::str::from_utf8(span).map_err(|_| fail("text is not UTF-8"))?;
    (0..n)
        .map(|i| {
            at(i)
                .zip(at(i + 1))
                .and_then(|(a, b)| all.get(a.checked_sub(first)?..b.checked_sub(first)?))
                .ok_or_else(|| fail("an offset is out of bounds"))
        })
        .collect()
}

/// A column of fixed-width numbers as bytes in native order (an Arrow data buffer).
fn buffer<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_bytes: fn(T) -> [u8; N],
) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to_bytes(v));
    }
    PyBytes::new(py, &out)
}

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
    let texts = texts(bytes_of(&data)?, bytes_of(&offsets)?, wide, n)?;
    py.detach(|| catch_unwind(AssertUnwindSafe(|| work(&texts))))
        .map_err(|_| {
            PyRuntimeError::new_err(format!("{name}: the Rust core failed (a bug in mdchunk)"))
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
