//! chunkmill._core.chunk_documents: the chunks stage of a batch of documents in one call,
//! columns in and columns out (chunkmill_core::chunk).
//!
//! - `inputs`: the call's documents, block columns and policy read into the core's types.
//! - `batch`: the counters a document is chunked with and the batch chunked over threads.
//! - `columns`: the chunks of a batch gathered into chunk columns, as lists or Arrow
//!   buffers.

pub(crate) mod batch;
pub(crate) mod columns;
pub(crate) mod inputs;

use std::borrow::Cow;

use chunkmill_core::chunk::heading::clean_blocks;
use chunkmill_core::chunk::{chunk_document, Block};
use chunkmill_core::parse::kind::Kind;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyDict;

use crate::strings::{self, Column};
use crate::tokens::encoding_named;
use batch::{chunk_estimated, chunk_natively, guarded, MapCount, Tokenizer};
use columns::Outcome;
use inputs::{
    doc_of, item_ranges, numbers, policy_of, BlockColumns, DocLists, PolicyTuple, Prepared,
};

/// The chunks of a batch. `tokenizer`: None for the estimate or `encoding` (a name of
/// chunkmill_core::tokens::exact, counted in the core), else (count, added) of a Python one.
/// Returns a dict of chunk columns (`doc`: the document index of each chunk; list columns
/// flat with offsets; `text` and `embed_text` as UTF-8 bytes with int64 `*_offsets`),
/// `rejects` [(doc, reason, detail)], and per chunk its document's `title` and
/// `strategy`: Python lists, or with `columnar` Arrow buffers (`Outcome::into_buffers`).
#[pyfunction]
#[pyo3(signature = (docs, blocks, prepared, policy, tokenizer=None, threads=1, columnar=false, encoding=None))]
#[allow(clippy::too_many_arguments)] // the arguments of the Python call, as it names them
fn chunk_documents<'py>(
    py: Python<'py>,
    docs: DocLists<'py>,
    blocks: BlockColumns<'py>,
    prepared: Prepared,
    policy: PolicyTuple,
    tokenizer: Option<(Bound<'py, PyAny>, i64)>,
    threads: usize,
    columnar: bool,
    encoding: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let encoding = encoding
        .map(|name| encoding_named(name, "chunk_documents"))
        .transpose()?;
    let n_docs = docs.0.len();
    let (starts, (plain_rows, image_rows)) = (&blocks.0, &prepared);
    let block_index = numbers(&blocks.1, None, "block_index", i32::from_ne_bytes)?;
    let n = block_index.len();
    let doc_held = strings::texts_of(&docs.2)?;
    let doc_texts = doc_held
        .iter()
        .map(|t| t.as_str("chunk_documents"))
        .collect::<PyResult<Vec<_>>>()?;
    let held: Vec<Column> = [&blocks.2, &blocks.3, &blocks.5, &blocks.9 .0]
        .into_iter()
        .map(Column::get)
        .collect::<PyResult<_>>()?;
    let [ids, kinds, block_texts, alts] = [0, 1, 2, 3].map(|c| held[c].texts("chunk_documents"));
    let (ids, kinds, block_texts, alts) = (ids?, kinds?, block_texts?, alts?);
    let level = numbers(&blocks.4, Some(n), "level", i32::from_ne_bytes)?;
    let char_start = numbers(&blocks.6, Some(n), "char_start", i64::from_ne_bytes)?;
    let char_end = numbers(&blocks.7, Some(n), "char_end", i64::from_ne_bytes)?;
    let line_start = numbers(&blocks.8, Some(n), "line_start", i32::from_ne_bytes)?;
    let no_alt = numbers(&blocks.9 .1, Some(n), "alt nulls", u8::from_ne_bytes)?;
    let (items, item_at) = item_ranges(&blocks.10, n)?;
    let tokens = numbers(&blocks.11, Some(n), "tokens", i32::from_ne_bytes)?;
    if starts.len() != n_docs || starts.iter().any(|&(a, b)| a > b || b > n) {
        return Err(PyValueError::new_err("chunk_documents: bad block runs"));
    }
    if [ids.len(), kinds.len(), block_texts.len(), alts.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(PyValueError::new_err(
            "chunk_documents: block columns differ in length",
        ));
    }
    let mut plain: Vec<Option<&str>> = vec![None; n];
    for (&r, t) in plain_rows.0.iter().zip(&plain_rows.1) {
        *plain
            .get_mut(r)
            .ok_or_else(|| PyValueError::new_err("bad plain row"))? = Some(t);
    }
    let mut image_src: Vec<Option<&str>> = vec![None; n];
    for (&r, t) in image_rows.0.iter().zip(&image_rows.1) {
        *image_src
            .get_mut(r)
            .ok_or_else(|| PyValueError::new_err("bad image row"))? = t.as_deref();
    }
    let bad = |what: &str| PyValueError::new_err(format!("chunk_documents: bad {what}"));
    let all: Vec<Block> = (0..n)
        .map(|i| {
            Ok(Block {
                block_index: i64::from(block_index[i]),
                block_id: Cow::Borrowed(ids[i]),
                kind: *Kind::ALL
                    .iter()
                    .find(|k| k.name() == kinds[i])
                    .ok_or_else(|| bad("kind"))?,
                level: match level[i] {
                    -1 => None,
                    l => Some(u8::try_from(l).map_err(|_| bad("level"))?),
                },
                text: block_texts[i],
                char_start: usize::try_from(char_start[i]).map_err(|_| bad("char_start"))?,
                char_end: usize::try_from(char_end[i]).map_err(|_| bad("char_end"))?,
                line_start: i64::from(line_start[i]),
                alt: (no_alt[i] == 0).then_some(alts[i]),
                item_starts: item_at[i].map(|(a, b)| &items[a..b]),
                tokens: i64::from(tokens[i]),
                plain: plain[i],
                image_src: image_src[i],
            })
        })
        .collect::<PyResult<_>>()?;
    let (policy, prose, code) = policy_of(&policy)?;
    let doc = |d: usize| {
        let title = docs.4[d].as_deref();
        doc_of(
            &docs.0[d],
            &docs.1[d],
            doc_texts[d],
            docs.3[d],
            title,
            &docs.5[d],
        )
    };
    let mut out = Outcome::default();
    match tokenizer {
        None if encoding.is_some() => {
            let e = encoding.expect("an encoding");
            let results = chunk_natively(py, &doc, &all, starts, &policy, &|_| e.clone(), threads);
            for (d, r) in results.into_iter().enumerate() {
                out.add(d, r);
            }
        }
        None => {
            let results = chunk_estimated(
                py,
                &doc,
                &all,
                starts,
                &docs.6,
                &policy,
                (prose, code),
                threads,
            );
            for (d, r) in results.into_iter().enumerate() {
                out.add(d, r);
            }
        }
        Some((count, added)) => {
            let mut tok = Tokenizer { count, added };
            for d in 0..n_docs {
                let r = guarded(|| {
                    chunk_document(&doc(d), &all[starts[d].0..starts[d].1], &policy, &mut tok)
                });
                let r = r.map(|r| {
                    r.map_err(|f| {
                        f.map_count(|e: PyErr| format!("{}: {}", type_name(py, &e), e.value(py)))
                    })
                });
                out.add(d, r);
            }
        }
    }
    if columnar {
        out.into_buffers(py)
    } else {
        out.into_dict(py)
    }
}

fn type_name(py: Python<'_>, e: &PyErr) -> String {
    e.get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into())
}

/// Per heading block text: its cleaned inline source when that still has markup for the
/// reference inline parser to reduce, else None.
#[pyfunction]
fn heading_markup(py: Python<'_>, texts: Vec<PyBackedStr>) -> PyResult<Vec<Option<String>>> {
    py.detach(|| {
        let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
        guarded(|| clean_blocks(&texts))
    })
    .map(|c| {
        c.into_iter()
            .map(|c| (!c.plain).then_some(c.text))
            .collect()
    })
    .ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "heading_markup: the Rust core failed (a bug in chunkmill)",
        )
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chunk_documents, m)?)?;
    m.add_function(wrap_pyfunction!(heading_markup, m)?)?;
    Ok(())
}
