//! mdchunk._core: the Python face of mdchunk-core. Inputs are converted in bulk, the work
//! runs without holding the interpreter, outputs come back as column lists. A panic never
//! crosses into Python: it is caught here and raised as RuntimeError.

use std::panic::{catch_unwind, AssertUnwindSafe};

use mdchunk_core::blocks::{blocks as core_blocks, Columns, Document};
use mdchunk_core::kind::Kind;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyDict, PyList, PyString};

/// Block columns (the blocks stage without its estimates) of every document:
/// doc (index into the inputs), block_index, block_id, kind, level, heading_path,
/// heading_levels, char_start, char_end (code points), line_start, line_end, info, lang,
/// alt, item_starts, n_rows, and fallback: the documents to parse with the reference
/// parser instead (none of their blocks are in the columns).
#[pyfunction]
fn blocks<'py>(
    py: Python<'py>,
    texts: Vec<PyBackedStr>,
    is_markdown: Vec<bool>,
    is_mdx: Vec<bool>,
) -> PyResult<Bound<'py, PyDict>> {
    if texts.len() != is_markdown.len() || texts.len() != is_mdx.len() {
        return Err(PyValueError::new_err(format!(
            "blocks: texts, is_markdown and is_mdx differ in length ({}, {}, {})",
            texts.len(),
            is_markdown.len(),
            is_mdx.len()
        )));
    }
    let docs: Vec<Document> = texts
        .iter()
        .zip(&is_markdown)
        .zip(&is_mdx)
        .map(|((text, &markdown), &mdx)| Document {
            text,
            markdown,
            mdx,
        })
        .collect();
    let cols = py
        .detach(|| catch_unwind(AssertUnwindSafe(|| core_blocks(&docs))))
        .map_err(|_| PyRuntimeError::new_err("blocks: the Rust core failed (a bug in mdchunk)"))?;
    columns_dict(py, cols)
}

fn columns_dict(py: Python<'_>, cols: Columns) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    let kinds: Vec<Bound<PyString>> = Kind::ALL
        .iter()
        .map(|k| PyString::intern(py, k.name()))
        .collect();
    let kind_of = |k: &Kind| kinds[*k as usize].clone();
    let mut titles = Vec::with_capacity(cols.paths.len());
    let mut levels = Vec::with_capacity(cols.paths.len());
    for (t, l) in &cols.paths {
        titles.push(PyList::new(py, t)?);
        levels.push(PyList::new(py, l)?);
    }
    out.set_item("doc", cols.doc)?;
    out.set_item("block_index", cols.block_index)?;
    out.set_item("block_id", cols.block_id)?;
    out.set_item("kind", PyList::new(py, cols.kind.iter().map(kind_of))?)?;
    out.set_item("level", cols.level)?;
    let paths = cols.path.iter().map(|&p| titles[p as usize].clone());
    out.set_item("heading_path", PyList::new(py, paths)?)?;
    let lvls = cols.path.iter().map(|&p| levels[p as usize].clone());
    out.set_item("heading_levels", PyList::new(py, lvls)?)?;
    out.set_item("char_start", cols.char_start)?;
    out.set_item("char_end", cols.char_end)?;
    out.set_item("line_start", cols.line_start)?;
    out.set_item("line_end", cols.line_end)?;
    out.set_item("info", cols.info)?;
    out.set_item("lang", cols.lang)?;
    out.set_item("alt", cols.alt)?;
    out.set_item("item_starts", cols.item_starts)?;
    out.set_item("n_rows", cols.n_rows)?;
    out.set_item("fallback", cols.fallback)?;
    Ok(out)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blocks, m)?)?;
    Ok(())
}
