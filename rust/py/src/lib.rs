//! chunkmill._core: the Python face of chunkmill-core. Inputs are converted in bulk, the work
//! runs without holding the interpreter, outputs come back as Arrow-ready buffers (native
//! byte order) or, for the mostly empty columns, lists. A panic never crosses into Python:
//! it is caught here and raised as RuntimeError.

mod chunk;
mod chunk_pass;
mod context;
mod pack;
mod postings;
mod section;
mod split;
mod strings;

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::parse::blocks::{blocks_in_threads, Columns, Document};
use chunkmill_core::parse::document as core_document;
use chunkmill_core::parse::kind::Kind;
use chunkmill_core::tokens::estimate::{
    english_documents as core_english, estimates as core_estimates,
};
use chunkmill_core::tokens::exact::Exact;
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::strings::buffer;

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
        out.set_item(name, chunk::utf8(py, values.iter().map(|v| v.as_deref()))?)?;
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

/// The exact counter a name Python passes names (`tokens.CORE_ENCODINGS`, or hf:PATH); a
/// ValueError naming `caller` and the reason for another name or a file that does not load.
pub(crate) fn encoding_named(name: &str, caller: &str) -> PyResult<Exact> {
    Exact::named(name).map_err(|e| PyValueError::new_err(format!("{caller}: {e}")))
}

/// The exact token counts of `texts` by the counter `name` (cl100k_base, o200k_base: as
/// tiktoken's `encode_ordinary` gives them; hf:PATH: as the tokenizer's `encode` without
/// special tokens; several, comma-separated: the most any of their models reads of a text
/// as a whole input, less `tokens_added`), counted on `threads` threads.
#[pyfunction]
#[pyo3(signature = (name, texts, threads=1))]
fn count_tokens(
    py: Python<'_>,
    name: &str,
    texts: Vec<PyBackedStr>,
    threads: usize,
) -> PyResult<Vec<i64>> {
    let encoding = encoding_named(name, "count_tokens")?;
    let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            encoding.count_all(&texts, threads, true)
        }))
    })
    .map_err(|_| {
        PyRuntimeError::new_err("count_tokens: the Rust core failed (a bug in chunkmill)")
    })?
    .map_err(|e| PyValueError::new_err(format!("count_tokens: {name}: {e}")))
}

/// The tokens the model of counter `name` adds around every input ([CLS] and [SEP] of a
/// BERT-style tokenizer; 0 for an encoding); a ValueError saying why `name` names none (the
/// user's words: a policy loads its counter by this call first).
#[pyfunction]
fn tokens_added(name: &str) -> PyResult<i64> {
    Ok(Exact::named(name).map_err(PyValueError::new_err)?.added())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(documents, m)?)?;
    m.add_function(wrap_pyfunction!(blocks, m)?)?;
    m.add_function(wrap_pyfunction!(estimates, m)?)?;
    m.add_function(wrap_pyfunction!(english_documents, m)?)?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(tokens_added, m)?)?;
    chunk::register(m)?;
    chunk_pass::register(m)?;
    context::register(m)?;
    pack::register(m)?;
    postings::register(m)?;
    section::register(m)?;
    split::register(m)?;
    Ok(())
}
