//! chunkmill._core.documents: the documents stage of a batch of raw documents' bytes.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::parse::document as core_document;
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::strings;

/// The documents stage of raw documents (`datas`: buffers of their bytes, read in place;
/// `markdown`: whether each is markdown, whose front matter is looked for): per document
/// its id (from `paths`) and content hash (of the bytes), then either a reject (`reason`,
/// `detail`) or where its text starts in the bytes (after a BOM), `had_bom`, `n_chars`,
/// `n_lines`, `newline` and its front matter (format, body start, body end in bytes of
/// the text) or None.
#[pyfunction]
fn documents<'py>(
    py: Python<'py>,
    datas: Vec<Bound<'py, PyAny>>,
    paths: Vec<String>,
    markdown: Vec<bool>,
    max_bytes: usize,
) -> PyResult<Bound<'py, PyDict>> {
    if datas.len() != paths.len() || datas.len() != markdown.len() {
        return Err(PyValueError::new_err(
            "documents: datas, paths and markdown differ in length",
        ));
    }
    let held = datas
        .iter()
        .map(PyUntypedBuffer::get)
        .collect::<PyResult<Vec<_>>>()?;
    let bytes = held
        .iter()
        .map(strings::bytes_of)
        .collect::<PyResult<Vec<_>>>()?;
    let done = py
        .detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let decoded: Vec<_> = bytes
                    .iter()
                    .zip(&markdown)
                    .map(|(d, &md)| core_document::decode(d, md, max_bytes))
                    .collect();
                let hashes: Vec<String> = bytes
                    .iter()
                    .map(|d| core_document::content_hash(d))
                    .collect();
                let ids: Vec<String> = paths.iter().map(|p| core_document::doc_id(p)).collect();
                (decoded, hashes, ids)
            }))
        })
        .map_err(|_| {
            PyRuntimeError::new_err("documents: the Rust core failed (a bug in chunkmill)")
        })?;
    let (decoded, hashes, ids) = done;
    let out = PyDict::new(py);
    let (mut reason, mut detail) = (Vec::new(), Vec::new());
    let (mut start, mut bom, mut chars, mut lines, mut newline, mut fm) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for d in decoded {
        match d {
            Ok(d) => {
                reason.push(None);
                detail.push(None);
                start.push(d.text_start);
                bom.push(d.had_bom);
                chars.push(d.n_chars);
                lines.push(d.n_lines);
                newline.push(Some(d.newline));
                fm.push(d.front_matter);
            }
            Err(r) => {
                reason.push(Some(r.reason));
                detail.push(Some(r.detail));
                start.push(0);
                bom.push(false);
                chars.push(0);
                lines.push(0);
                newline.push(None);
                fm.push(None);
            }
        }
    }
    out.set_item("doc_id", ids)?;
    out.set_item("content_hash", hashes)?;
    out.set_item("reason", reason)?;
    out.set_item("detail", detail)?;
    out.set_item("text_start", start)?;
    out.set_item("had_bom", bom)?;
    out.set_item("n_chars", chars)?;
    out.set_item("n_lines", lines)?;
    out.set_item("newline", newline)?;
    out.set_item("front_matter", fm)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(documents, m)?)?;
    Ok(())
}
