//! chunkmill._core.chunk_pass: decoded documents to chunk columns in one call (the blocks,
//! their estimates and each document's language made and read in the core, never handed
//! to Python), under the estimate.

use std::borrow::Cow;

use chunkmill_core::chunk::Block;
use chunkmill_core::parse::blocks::Document;
use chunkmill_core::parse::kind::Kind;
use chunkmill_core::parse::parsed::{parsed, Parsed};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};

use crate::blocks::{block_texts, columns_dict};
use crate::chunk::batch::{chunk_estimated, chunk_natively, guarded, Result1};
use crate::chunk::columns::{settled, Outcome};
use crate::chunk::inputs::{doc_of, policy_of, PolicyTuple};
use crate::strings;
use crate::tokens::encoding_named;

/// Documents: doc_id, path, text (a str or a buffer of its UTF-8 bytes), plain-text
/// format, markdown, MDX, front matter title and field lines of each.
type PassDocs<'py> = (
    Vec<PyBackedStr>,
    Vec<PyBackedStr>,
    Vec<Bound<'py, PyAny>>,
    Vec<bool>,
    Vec<bool>,
    Vec<bool>,
    Vec<Option<PyBackedStr>>,
    Vec<Vec<PyBackedStr>>,
);

/// The chunks of decoded documents, counted by the estimate or (`encoding`, a name of
/// chunkmill_core::tokens::encoding) exactly, as `chunk_documents` gives them
/// (`columnar`: Arrow buffers), and `fallback`: the documents left to the reference parser
/// (not chunked here). `prepare(marked, images, bracket, defining)` is called, the
/// interpreter held, once per document with a heading whose markup the reference inline
/// parser reduces or with an image: it gets those headings' cleaned sources, the image
/// blocks' texts, whether any heading has a `[`, and the paragraphs that may define link
/// references, and returns (the headings' reduced texts, the images' sources).
///
/// With `rows` = (each document's front matter value, token_source, policy_hash) the
/// chunks come as `rows` instead: one tuple per chunk in the CHUNKS columns' order (lists
/// as tuples), with `rejects` and `fallback`. With `blocks`, `blocks` holds the blocks
/// stage's columns (as `blocks` gives them, with `n_chars` and `est_tokens` buffers).
#[pyfunction]
#[pyo3(signature = (docs, policy, prepare, threads=1, columnar=false, rows=None, blocks=false, encoding=None))]
#[allow(clippy::too_many_arguments)] // the arguments of the Python call, as it names them
fn chunk_pass<'py>(
    py: Python<'py>,
    docs: PassDocs<'py>,
    policy: PolicyTuple,
    prepare: Bound<'py, PyAny>,
    threads: usize,
    columnar: bool,
    rows: Option<RowValues<'py>>,
    blocks: bool,
    encoding: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let encoding = encoding
        .map(|name| encoding_named(name, "chunk_pass"))
        .transpose()?;
    let n_docs = docs.0.len();
    let lengths = [
        docs.1.len(),
        docs.2.len(),
        docs.3.len(),
        docs.4.len(),
        docs.5.len(),
        docs.6.len(),
        docs.7.len(),
    ];
    if lengths.iter().any(|&l| l != n_docs) {
        return Err(PyValueError::new_err(
            "chunk_pass: document lists differ in length",
        ));
    }
    let held = strings::texts_of(&docs.2)?;
    let texts = held
        .iter()
        .map(|t| t.as_str("chunk_pass"))
        .collect::<PyResult<Vec<_>>>()?;
    let documents: Vec<Document> = (0..n_docs)
        .map(|d| Document {
            text: texts[d],
            markdown: docs.4[d],
            mdx: docs.5[d],
        })
        .collect();
    let (policy_core, prose, code) = policy_of(&policy)?;
    let bias = &policy.0 .8;
    let p = py
        .detach(|| guarded(|| parsed(&documents, bias, threads)))
        .ok_or_else(|| {
            PyRuntimeError::new_err("chunk_pass: the Rust core failed (a bug in chunkmill)")
        })?
        .ok_or_else(|| PyValueError::new_err(format!("chunk_pass: unknown bias {bias:?}")))?;
    let doc = |d: usize| {
        let title = docs.6[d].as_deref();
        doc_of(
            &docs.0[d], &docs.1[d], texts[d], docs.3[d], title, &docs.7[d],
        )
    };
    let results = {
        let (plain, image_src) = prepared(&p, &documents, &prepare)?;
        let items: Vec<Option<Vec<i64>>> = p
            .cols
            .item_starts
            .iter()
            .map(|s| {
                s.as_ref()
                    .map(|v| v.iter().map(|&x| i64::from(x)).collect())
            })
            .collect();
        let c = &p.cols;
        let tokens: Vec<i64> = match &encoding {
            None => p.est.iter().map(|&t| i64::from(t)).collect(),
            Some(e) => {
                let texts: Vec<&str> = (0..c.doc.len()).map(|i| p.text(&documents, i)).collect();
                py.detach(|| e.count_all(&texts, threads, false))
                    .map_err(|e| PyValueError::new_err(format!("chunk_pass: {e}")))?
            }
        };
        let all: Vec<Block> = (0..c.doc.len())
            .map(|i| Block {
                block_index: i64::from(c.block_index[i]),
                block_id: Cow::Borrowed(&c.block_id[i]),
                kind: c.kind[i],
                level: c.level[i].and_then(|l| u8::try_from(l).ok()),
                text: p.text(&documents, i),
                char_start: c.char_start[i] as usize,
                char_end: c.char_end[i] as usize,
                line_start: i64::from(c.line_start[i]),
                alt: c.alt[i].as_deref(),
                item_starts: items[i].as_deref(),
                tokens: tokens[i],
                plain: plain[i].as_deref(),
                image_src: image_src[i].as_deref(),
            })
            .collect();
        match encoding {
            None => {
                let english: Vec<Option<bool>> = p.english.iter().map(|&e| Some(e)).collect();
                let weights = (prose, code);
                chunk_estimated(
                    py,
                    &doc,
                    &all,
                    &p.runs,
                    &english,
                    &policy_core,
                    weights,
                    threads,
                )
            }
            Some(e) => chunk_natively(
                py,
                &doc,
                &all,
                &p.runs,
                &policy_core,
                &|_| e.clone(),
                threads,
            ),
        }
    };
    let fallback = p.cols.fallback.clone();
    let block_columns = match blocks {
        true => Some(block_columns(py, p, &documents)?),
        false => None,
    };
    if let Some(values) = rows {
        let chunker_version = &policy.0 .7;
        let done = chunk_rows(py, results, &docs.0, &docs.1, &values, chunker_version)?;
        done.set_item("fallback", fallback)?;
        done.set_item("blocks", block_columns)?;
        return Ok(done);
    }
    let mut out = Outcome::default();
    for (d, r) in results.into_iter().enumerate() {
        out.add(d, r);
    }
    let done = if columnar {
        out.into_buffers(py)?
    } else {
        out.into_dict(py)?
    };
    done.set_item("fallback", fallback)?;
    done.set_item("blocks", block_columns)?;
    Ok(done)
}

/// The blocks stage's columns of the pass (`blocks` in blocks.rs) with its estimates.
fn block_columns<'py>(
    py: Python<'py>,
    p: Parsed,
    documents: &[Document],
) -> PyResult<Bound<'py, PyDict>> {
    let (text, offsets) = block_texts(py, documents, &p.cols)?;
    let out = columns_dict(py, p.cols, text, &offsets)?;
    out.set_item("n_chars", strings::buffer(py, &p.n_chars, i32::to_ne_bytes))?;
    out.set_item("est_tokens", strings::buffer(py, &p.est, i32::to_ne_bytes))?;
    Ok(out)
}

/// Each document's front matter value, token_source, policy_hash.
type RowValues<'py> = (Vec<Bound<'py, PyAny>>, String, String);

/// `rows` and `rejects` [(doc, reason, detail)] of the documents' results (`chunk_pass`).
fn chunk_rows<'py>(
    py: Python<'py>,
    results: Vec<Result1>,
    doc_ids: &[PyBackedStr],
    paths: &[PyBackedStr],
    (front_matter, token_source, policy_hash): &RowValues<'py>,
    chunker_version: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let (out, rows) = (PyDict::new(py), PyList::empty(py));
    let mut rejects = Vec::new();
    for (d, r) in results.into_iter().enumerate() {
        let done = match settled(r) {
            Ok(done) => done,
            Err((reason, detail)) => {
                rejects.push((d, reason, detail));
                continue;
            }
        };
        for (i, r) in done.rows.into_iter().enumerate() {
            let first = r.spans.first().map(|s| s.0);
            let last = r.spans.last().map(|s| s.1);
            let values: Vec<Bound<'py, PyAny>> = vec![
                r.chunk_id.into_pyobject(py)?.into_any(),
                doc_ids[d].clone_ref(py).into_pyobject(py)?.into_any(),
                paths[d].clone_ref(py).into_pyobject(py)?.into_any(),
                done.title.as_str().into_pyobject(py)?.into_any(),
                i.into_pyobject(py)?.into_any(),
                r.chunk_type.into_pyobject(py)?.into_any(),
                r.name.into_pyobject(py)?.into_any(),
                PyTuple::new(py, r.breadcrumb)?.into_any(),
                r.header_level.into_pyobject(py)?.into_any(),
                r.section_title.into_pyobject(py)?.into_any(),
                r.anchor.into_pyobject(py)?.into_any(),
                r.url.into_pyobject(py)?.into_any(),
                PyTuple::new(py, r.headings)?.into_any(),
                r.text.into_pyobject(py)?.into_any(),
                r.embed_text.into_pyobject(py)?.into_any(),
                r.embed_hash.into_pyobject(py)?.into_any(),
                r.image_src.into_pyobject(py)?.into_any(),
                r.n_tokens.into_pyobject(py)?.into_any(),
                token_source.into_pyobject(py)?.into_any(),
                r.overlap_tokens.into_pyobject(py)?.into_any(),
                r.block_start.into_pyobject(py)?.into_any(),
                r.block_end.into_pyobject(py)?.into_any(),
                PyTuple::new(py, r.block_ids)?.into_any(),
                PyTuple::new(py, r.spans)?.into_any(),
                first.into_pyobject(py)?.into_any(),
                last.into_pyobject(py)?.into_any(),
                PyBool::new(py, r.is_slice).to_owned().into_any(),
                r.line_start.into_pyobject(py)?.into_any(),
                r.line_end.into_pyobject(py)?.into_any(),
                PyBool::new(py, r.parts > 1).to_owned().into_any(),
                r.part.into_pyobject(py)?.into_any(),
                r.parts.into_pyobject(py)?.into_any(),
                done.strategy.into_pyobject(py)?.into_any(),
                front_matter[d].clone(),
                chunker_version.into_pyobject(py)?.into_any(),
                policy_hash.into_pyobject(py)?.into_any(),
            ];
            rows.append(PyTuple::new(py, values)?)?;
        }
    }
    out.set_item("rows", rows)?;
    out.set_item("rejects", rejects)?;
    Ok(out)
}

/// Per block: a heading's text as the reference inline parser reduces it, an image's
/// source (both None elsewhere), from `prepare` (see `chunk_pass`).
type Values = (Vec<Option<String>>, Vec<Option<String>>);

fn prepared(p: &Parsed, documents: &[Document], prepare: &Bound<'_, PyAny>) -> PyResult<Values> {
    let (c, n) = (&p.cols, p.cols.doc.len());
    let (mut plain, mut image_src) = (vec![None; n], vec![None; n]);
    for &(a, b) in &p.runs {
        let marked: Vec<usize> = (a..b).filter(|&i| p.markup[i].is_some()).collect();
        let images: Vec<usize> = (a..b).filter(|&i| c.kind[i] == Kind::Image).collect();
        if marked.is_empty() && images.is_empty() {
            continue;
        }
        let text = |i: usize| p.text(documents, i);
        let bracket = (a..b).any(|i| c.kind[i] == Kind::Heading && text(i).contains('['));
        let defining: Vec<&str> = (a..b)
            .filter(|&i| c.kind[i] == Kind::Paragraph && text(i).contains("]:"))
            .map(text)
            .collect();
        let sources: Vec<&str> = marked
            .iter()
            .filter_map(|&i| p.markup[i].as_deref())
            .collect();
        let image_texts: Vec<&str> = images.iter().map(|&i| text(i)).collect();
        let (plains, srcs): (Vec<String>, Vec<Option<String>>) = prepare
            .call1((sources, image_texts, bracket, defining))?
            .extract()?;
        if plains.len() != marked.len() || srcs.len() != images.len() {
            return Err(PyValueError::new_err(
                "chunk_pass: prepare returned lists of other lengths",
            ));
        }
        for (i, t) in marked.into_iter().zip(plains) {
            plain[i] = Some(t);
        }
        for (i, s) in images.into_iter().zip(srcs) {
            image_src[i] = s;
        }
    }
    Ok((plain, image_src))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chunk_pass, m)?)?;
    Ok(())
}
