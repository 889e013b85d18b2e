//! The bindings of `chunkmill_core::chunk::heading` and `chunkmill_core::chunk::context`:
//! clean heading texts, slugs and anchors, context headers, clipped elements and urls.
//! Inline markup in a heading is reduced by the caller's reference inline parser, one call
//! per document.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::chunk::context as core_context;
use chunkmill_core::chunk::heading::{self as core_heading, Anchors};
use chunkmill_core::pyunicode;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

/// `f()`, a panic raised as RuntimeError.
fn guarded<T>(name: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        PyRuntimeError::new_err(format!("{name}: the Rust core failed (a bug in chunkmill)"))
    })
}

/// The inline content of a heading block: ATX markers or the setext underline removed.
#[pyfunction]
fn heading_source(block_text: &str) -> PyResult<String> {
    guarded("heading_source", || core_heading::source(block_text))
}

/// (text, explicit id or None, plain) of a heading's inline source: when `plain` is
/// false, `text` still holds inline markup for the reference inline parser.
#[pyfunction]
fn heading_clean(inline: &str) -> PyResult<(String, Option<String>, bool)> {
    let c = guarded("heading_clean", || core_heading::clean(inline))?;
    Ok((c.text, c.explicit, c.plain))
}

/// The text of inline source without markup characters, or None when it has some.
#[pyfunction]
fn heading_plain_text(inline: &str) -> PyResult<Option<String>> {
    guarded("heading_plain_text", || core_heading::plain_text(inline))
}

/// GitHub's slug of a heading's text.
#[pyfunction]
fn slug(text: &str) -> PyResult<String> {
    guarded("slug", || core_heading::slug(text))
}

/// Whether a slug keeps the (lower-case) character `c`.
#[pyfunction]
fn slug_keeps(c: char) -> bool {
    core_heading::kept(c)
}

/// Python's `str.lower()` of this interpreter's Unicode version, Final_Sigma included.
#[pyfunction]
fn str_lower(text: &str) -> PyResult<String> {
    guarded("str_lower", || pyunicode::lower(text))
}

/// Python's `str.casefold()`.
#[pyfunction]
fn str_casefold(text: &str) -> PyResult<String> {
    guarded("str_casefold", || pyunicode::casefold(text))
}

/// The anchors of one document's headings, in document order: call with each heading's
/// text and explicit id.
#[pyclass(module = "chunkmill._core")]
#[derive(Default)]
struct HeadingAnchors {
    anchors: Anchors,
}

#[pymethods]
impl HeadingAnchors {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    fn __call__(&mut self, text: &str, explicit: Option<&str>) -> PyResult<String> {
        guarded("HeadingAnchors", || self.anchors.anchor(text, explicit))
    }
}

/// Texts (bounded titles), explicit ids and anchors of one document's heading blocks, in
/// document order. `plain` reduces inline markdown: it gets the list of the texts that
/// have markup (at most one call) and returns their plain texts.
#[pyfunction]
fn headings(
    py: Python<'_>,
    blocks: Vec<PyBackedStr>,
    plain: Bound<'_, PyAny>,
) -> PyResult<HeadingColumns> {
    let cleaned = py.detach(|| {
        let blocks: Vec<&str> = blocks.iter().map(|b| &**b).collect();
        guarded("headings", || core_heading::clean_blocks(&blocks))
    })?;
    let marked: Vec<&str> = cleaned
        .iter()
        .filter(|c| !c.plain)
        .map(|c| c.text.as_str())
        .collect();
    let reduced: Vec<String> = if marked.is_empty() {
        Vec::new()
    } else {
        plain.call1((marked.clone(),))?.extract()?
    };
    if reduced.len() != marked.len() {
        return Err(PyValueError::new_err(format!(
            "headings: plain returned {} texts for {}",
            reduced.len(),
            marked.len()
        )));
    }
    let mut reduced = reduced.into_iter();
    let texts: Vec<(String, Option<String>)> = cleaned
        .into_iter()
        .map(|c| match c.plain {
            true => (c.text, c.explicit),
            false => (reduced.next().unwrap_or_default(), c.explicit),
        })
        .collect();
    let out = py.detach(|| guarded("headings", || core_heading::titles_and_anchors(texts)))?;
    Ok((out.texts, out.explicit, out.anchors))
}

/// Texts, explicit ids (or None) and anchors.
type HeadingColumns = (Vec<String>, Vec<Option<String>>, Vec<String>);

/// `text` cut to `limit` code points at its last space within them, "…" after it.
#[pyfunction]
fn clip(text: &str, limit: usize) -> PyResult<String> {
    guarded("clip", || core_context::clip(text, limit))
}

/// `Title > A > B`: an element equal to the previous one is left out.
#[pyfunction]
fn header_line(title: &str, path: Vec<PyBackedStr>) -> PyResult<String> {
    let path: Vec<&str> = path.iter().map(|p| &**p).collect();
    guarded("header_line", || core_context::header_line(title, &path))
}

/// The chunk's link from a link template; ValueError for a template it cannot fill.
#[pyfunction]
#[pyo3(signature = (template, path, anchor, line_start, line_end))]
fn link(
    template: &str,
    path: &str,
    anchor: Option<&str>,
    line_start: i64,
    line_end: i64,
) -> PyResult<String> {
    guarded("link", || {
        core_context::url(template, path, anchor, line_start, line_end)
    })?
    .map_err(PyValueError::new_err)
}

/// The file-stem title of a document at `path`.
#[pyfunction]
fn path_title(path: &str) -> PyResult<String> {
    guarded("path_title", || core_context::path_title(path))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(heading_source, m)?)?;
    m.add_function(wrap_pyfunction!(heading_clean, m)?)?;
    m.add_function(wrap_pyfunction!(heading_plain_text, m)?)?;
    m.add_function(wrap_pyfunction!(slug, m)?)?;
    m.add_function(wrap_pyfunction!(slug_keeps, m)?)?;
    m.add_function(wrap_pyfunction!(str_lower, m)?)?;
    m.add_function(wrap_pyfunction!(str_casefold, m)?)?;
    m.add_class::<HeadingAnchors>()?;
    m.add_function(wrap_pyfunction!(headings, m)?)?;
    m.add_function(wrap_pyfunction!(clip, m)?)?;
    m.add_function(wrap_pyfunction!(header_line, m)?)?;
    m.add_function(wrap_pyfunction!(link, m)?)?;
    // How a context header joins its elements, and the longest element it keeps whole.
    m.add("HEADER_SEP", core_context::SEP)?;
    m.add("MAX_ELEMENT_CHARS", core_context::MAX_ELEMENT_CHARS)?;
    m.add_function(wrap_pyfunction!(path_title, m)?)?;
    Ok(())
}
