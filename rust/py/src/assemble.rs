//! The chunk texts and ids of one document (mdchunk_core::assemble): one call per document,
//! plain lists in and out.

use std::panic::{catch_unwind, AssertUnwindSafe};

use mdchunk_core::assemble::{self as core, Group, IdParts, Units};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

/// A document's units: keys, texts, the number of spans of each, all their spans one after
/// the other ((start, end) code points), tokens and block indices.
type UnitLists = (
    Vec<PyBackedStr>,
    Vec<PyBackedStr>,
    Vec<usize>,
    Vec<(usize, usize)>,
    Vec<i64>,
    Vec<i64>,
);

/// A document's groups: unit indices, overlap (leading units repeated from the group
/// before), context prefix, anchor, and the body of an image group (None otherwise).
type GroupLists = (
    Vec<Vec<usize>>,
    Vec<usize>,
    Vec<PyBackedStr>,
    Vec<Option<PyBackedStr>>,
    Vec<Option<PyBackedStr>>,
);

/// Per group: body, spans, line_start, line_end, chunk_id, overlap_tokens, block_start,
/// block_end.
type ChunkLists = (
    Vec<String>,
    Vec<Vec<(usize, usize)>>,
    Vec<usize>,
    Vec<usize>,
    Vec<String>,
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
);

/// The chunk columns of a document's groups (`ChunkLists`); `ids` is (doc_id, chunker
/// version, policy id hash).
#[pyfunction]
fn assemble(
    py: Python<'_>,
    text: PyBackedStr,
    ids: (PyBackedStr, PyBackedStr, PyBackedStr),
    units: UnitLists,
    groups: GroupLists,
) -> PyResult<ChunkLists> {
    let (keys, texts, n_spans, spans, tokens, block_index) = units;
    let (members, overlap, prefixes, anchors, image_bodies) = groups;
    let n = members.len();
    if [
        overlap.len(),
        prefixes.len(),
        anchors.len(),
        image_bodies.len(),
    ] != [n; 4]
        || [texts.len(), n_spans.len(), tokens.len(), block_index.len()] != [keys.len(); 4]
    {
        return Err(PyValueError::new_err(
            "assemble: the unit or group lists differ in length",
        ));
    }
    let out = py
        .detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let keys: Vec<&str> = keys.iter().map(|k| &**k).collect();
                let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
                let mut span_starts = vec![0];
                span_starts.extend(n_spans.iter().scan(0, |at, n| {
                    *at += n;
                    Some(*at)
                }));
                let units = Units {
                    text: &text,
                    keys: &keys,
                    texts: &texts,
                    spans: &spans,
                    span_starts: &span_starts,
                    tokens: &tokens,
                    block_index: &block_index,
                };
                let groups: Vec<Group> = (0..n)
                    .map(|i| Group {
                        units: &members[i],
                        overlap: overlap[i],
                        prefix: &prefixes[i],
                        anchor: anchors[i].as_deref(),
                        image_body: image_bodies[i].as_deref(),
                    })
                    .collect();
                let ids = IdParts {
                    doc_id: &ids.0,
                    chunker_version: &ids.1,
                    id_hash: &ids.2,
                };
                core::assemble(&units, &groups, &ids)
            }))
        })
        .map_err(|_| PyRuntimeError::new_err("assemble: the Rust core failed (a bug in mdchunk)"))?
        .map_err(|why| PyValueError::new_err(format!("assemble: {why}")))?;
    let mut cols = ChunkLists::default();
    for chunk in out {
        cols.0.push(chunk.body);
        cols.1.push(chunk.spans);
        cols.2.push(chunk.line_start);
        cols.3.push(chunk.line_end);
        cols.4.push(chunk.chunk_id);
        cols.5.push(chunk.overlap_tokens);
        cols.6.push(chunk.block_start);
        cols.7.push(chunk.block_end);
    }
    Ok(cols)
}

/// The embed_hash of every embed_text: equal for equal texts, across documents.
#[pyfunction]
fn embed_hashes(texts: Vec<PyBackedStr>) -> Vec<String> {
    texts.iter().map(|t| core::embed_hash(t)).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    m.add_function(wrap_pyfunction!(embed_hashes, m)?)?;
    Ok(())
}
