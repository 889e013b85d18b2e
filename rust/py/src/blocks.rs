//! chunkmill._core.blocks: the blocks stage of a batch of decoded documents (without its
//! estimates), the block columns as Arrow buffers.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::parse::blocks::{blocks_in_threads, Columns, Document};
use chunkmill_core::parse::kind::Kind;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::chunk::columns::utf8;
use crate::strings::{self, buffer};

/// Block columns (the blocks stage without its estimates) of every document:
/// doc (uint32: index into the inputs), block_index (int32), block_id (16 ASCII bytes per
/// block), kind (uint8: index into `kinds`), level, path (uint32: index into `paths`, the
/// distinct (heading titles, heading levels) lists), char_start, char_end (int64, code
/// points), line_start, line_end (int32), info, lang, alt (string columns: data and int32
/// offsets), item_starts (int32 list offsets and values), n_rows (int32), each of these
/// and level with a `*_nulls` flag per block (1: null), text and text_offsets (the blocks' texts as one UTF-8 buffer, int64 offsets), and
/// fallback: the documents to parse with the reference parser instead (none of their
/// blocks are in the columns). `texts`: each a str or a buffer of its UTF-8 bytes (read in
/// place). `threads` > 1 spreads the documents over that many threads (the same columns).
#[pyfunction]
#[pyo3(signature = (texts, is_markdown, is_mdx, threads = 1))]
fn blocks<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyAny>>,
    is_markdown: Vec<bool>,
    is_mdx: Vec<bool>,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    if texts.len() != is_markdown.len() || texts.len() != is_mdx.len() {
        return Err(PyValueError::new_err(format!(
            "blocks: texts, is_markdown and is_mdx differ in length ({}, {}, {})",
            texts.len(),
            is_markdown.len(),
            is_mdx.len()
        )));
    }
    let held = strings::texts_of(&texts)?;
    let texts = held
        .iter()
        .map(|t| t.as_str("blocks"))
        .collect::<PyResult<Vec<_>>>()?;
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
        .detach(|| catch_unwind(AssertUnwindSafe(|| blocks_in_threads(&docs, threads))))
        .map_err(|_| {
            PyRuntimeError::new_err("blocks: the Rust core failed (a bug in chunkmill)")
        })?;
    let (text, offsets) = block_texts(py, &docs, &cols)?;
    columns_dict(py, cols, text, &offsets)
}

/// Every block's text, one after the other (written straight into the bytes object, no
/// second copy), and the offsets of each (n + 1 of them).
pub(crate) fn block_texts<'py>(
    py: Python<'py>,
    docs: &[Document],
    cols: &Columns,
) -> PyResult<(Bound<'py, PyBytes>, Vec<i64>)> {
    let mut offsets = Vec::with_capacity(cols.doc.len() + 1);
    offsets.push(0i64);
    for (&a, &b) in cols.byte_start.iter().zip(&cols.byte_end) {
        offsets.push(offsets[offsets.len() - 1] + (b - a) as i64);
    }
    let total = offsets[offsets.len() - 1] as usize;
    let text = PyBytes::new_with(py, total, |out| {
        let rows = cols.doc.iter().zip(&cols.byte_start).zip(&cols.byte_end);
        for (((&d, &a), &b), &at) in rows.zip(&offsets) {
            out[at as usize..at as usize + (b - a)]
                .copy_from_slice(&docs[d as usize].text.as_bytes()[a..b]);
        }
        Ok(())
    })?;
    Ok((text, offsets))
}

pub(crate) fn columns_dict<'py>(
    py: Python<'py>,
    cols: Columns,
    text: Bound<'py, PyBytes>,
    offsets: &[i64],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    out.set_item("kinds", kinds)?;
    out.set_item("n", cols.doc.len())?;
    out.set_item("doc", buffer(py, &cols.doc, u32::to_ne_bytes))?;
    out.set_item(
        "block_index",
        buffer(py, &cols.block_index, i32::to_ne_bytes),
    )?;
    let ids: Vec<u8> = cols.block_id.iter().flat_map(|id| id.bytes()).collect();
    out.set_item("block_id", PyBytes::new(py, &ids))?;
    let kind: Vec<u8> = cols.kind.iter().map(|&k| k as u8).collect();
    out.set_item("kind", PyBytes::new(py, &kind))?;
    let level: Vec<i8> = cols.level.iter().map(|l| l.unwrap_or(0)).collect();
    out.set_item("level", buffer(py, &level, i8::to_ne_bytes))?;
    out.set_item("level_nulls", nulls(py, &cols.level))?;
    out.set_item("path", buffer(py, &cols.path, u32::to_ne_bytes))?;
    let paths = PyList::empty(py);
    for (titles, levels) in &cols.paths {
        paths.append((PyList::new(py, titles)?, PyList::new(py, levels)?))?;
    }
    out.set_item("paths", paths)?;
    out.set_item("char_start", buffer(py, &cols.char_start, i64::to_ne_bytes))?;
    out.set_item("char_end", buffer(py, &cols.char_end, i64::to_ne_bytes))?;
    out.set_item("line_start", buffer(py, &cols.line_start, i32::to_ne_bytes))?;
    out.set_item("line_end", buffer(py, &cols.line_end, i32::to_ne_bytes))?;
    for (name, values) in [
        ("info", &cols.info),
        ("lang", &cols.lang),
        ("alt", &cols.alt),
    ] {
        out.set_item(name, utf8(py, values.iter().map(|v| v.as_deref()))?)?;
        out.set_item(format!("{name}_nulls"), nulls(py, values))?;
    }
    let mut starts = vec![0i32];
    let mut flat: Vec<i32> = Vec::new();
    for s in &cols.item_starts {
        flat.extend(s.iter().flatten());
        let end = i32::try_from(flat.len())
            .map_err(|_| PyValueError::new_err("blocks: item starts over 2 GiB"))?;
        starts.push(end);
    }
    out.set_item(
        "item_starts",
        (
            buffer(py, &starts, i32::to_ne_bytes),
            buffer(py, &flat, i32::to_ne_bytes),
        ),
    )?;
    out.set_item("item_starts_nulls", nulls(py, &cols.item_starts))?;
    let n_rows: Vec<i32> = cols.n_rows.iter().map(|r| r.unwrap_or(0)).collect();
    out.set_item("n_rows", buffer(py, &n_rows, i32::to_ne_bytes))?;
    out.set_item("n_rows_nulls", nulls(py, &cols.n_rows))?;
    out.set_item("text", text)?;
    out.set_item("text_offsets", buffer(py, offsets, i64::to_ne_bytes))?;
    out.set_item("fallback", cols.fallback)?;
    Ok(out)
}

/// One byte per value: 1 where it is None.
fn nulls<'py, T>(py: Python<'py>, values: &[Option<T>]) -> Bound<'py, PyBytes> {
    let flags: Vec<u8> = values.iter().map(|v| u8::from(v.is_none())).collect();
    PyBytes::new(py, &flags)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blocks, m)?)?;
    // The block kinds in their schema order, and those counted with the code weights.
    m.add("KIND_NAMES", Kind::ALL.map(Kind::name).to_vec())?;
    let code_like: Vec<&str> = Kind::ALL
        .into_iter()
        .filter(|k| k.code_like())
        .map(Kind::name)
        .collect();
    m.add("CODE_LIKE", code_like)?;
    // The bounds the reference parser (pipeline/parse.py, mdx.py) must share with the core.
    m.add("TITLE_CHARS", chunkmill_core::parse::TITLE_CHARS)?;
    m.add(
        "TITLE_SOURCE_CHARS",
        chunkmill_core::chunk::heading::TITLE_SOURCE_CHARS,
    )?;
    m.add(
        "MDX_SCAN_BUDGET_PER_CHAR",
        chunkmill_core::parse::mdx::SCAN_BUDGET_PER_CHAR,
    )?;
    m.add(
        "MDX_SCAN_BUDGET_FLOOR",
        chunkmill_core::parse::mdx::SCAN_BUDGET_FLOOR,
    )?;
    Ok(())
}
