//! The arguments of chunk_documents read into the core's types: the documents' lists, the
//! blocks' Arrow buffers (read in place) and the policy's tuple.

use chunkmill_core::chunk::{Doc, Policy};
use chunkmill_core::tokens::estimate::weights;
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use super::batch::Weights;
use crate::strings::{self, ColumnArg};

/// Documents: doc_id, path, text (a str or a buffer of its UTF-8 bytes), plain-text
/// format, front matter title, field lines and the language of each (None: unknown).
pub(super) type DocLists<'py> = (
    Vec<PyBackedStr>,
    Vec<PyBackedStr>,
    Vec<Bound<'py, PyAny>>,
    Vec<bool>,
    Vec<Option<PyBackedStr>>,
    Vec<Vec<PyBackedStr>>,
    Vec<Option<bool>>,
);

/// Blocks of all documents, each document's in a run, as columns read in place: `runs`
/// (first and end row of each document's blocks), then per block, Arrow buffers in native
/// order: block_index (int32), block_id and kind (string columns, strings::ColumnArg),
/// level (int32, -1 for none), text (a string column), char_start and char_end (int64),
/// line_start (int32), alt (a string column and a uint8 null flag per block), item_starts
/// (a list column: its n + 1 int32 offsets into its int32 values, and a uint8 null flag
/// per block), tokens (int32). No Python object per block.
pub(super) type BlockColumns<'py> = (
    Vec<(usize, usize)>,
    Bound<'py, PyAny>,
    ColumnArg<'py>,
    ColumnArg<'py>,
    Bound<'py, PyAny>,
    ColumnArg<'py>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    (ColumnArg<'py>, Bound<'py, PyAny>),
    (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    Bound<'py, PyAny>,
);

/// The `n` fixed-width numbers of a buffer (`name` says which, in errors).
pub(super) fn numbers<T, const N: usize>(
    obj: &Bound<'_, PyAny>,
    n: Option<usize>,
    name: &str,
    from: fn([u8; N]) -> T,
) -> PyResult<Vec<T>> {
    let held = PyUntypedBuffer::get(obj)?;
    let bytes = strings::bytes_of(&held)?;
    if bytes.len() % N != 0 || n.is_some_and(|n| bytes.len() != n * N) {
        return Err(PyValueError::new_err(format!(
            "chunk_documents: {name} has {} bytes, not {} numbers of {N}",
            bytes.len(),
            n.map_or("whole".to_owned(), |n| n.to_string())
        )));
    }
    Ok(bytes
        .chunks_exact(N)
        .map(|b| from(b.try_into().unwrap()))
        .collect())
}

/// The item starts of every block, one flat list, and each block's range of it (None for a
/// null list).
type ItemStarts = (Vec<i64>, Vec<Option<(usize, usize)>>);

/// Each block's item starts (None for a null list) as ranges of one flat list.
pub(super) fn item_ranges(
    (offsets, values, nulls): &(Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>),
    n: usize,
) -> PyResult<ItemStarts> {
    let offsets = numbers(
        offsets,
        Some(n + 1),
        "item_starts offsets",
        i32::from_ne_bytes,
    )?;
    let values = numbers(values, None, "item_starts values", i32::from_ne_bytes)?;
    let nulls = numbers(nulls, Some(n), "item_starts nulls", u8::from_ne_bytes)?;
    let bad = || PyValueError::new_err("chunk_documents: bad item_starts offsets");
    let first = usize::try_from(offsets[0]).map_err(|_| bad())?;
    let mut ranges = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (usize::try_from(offsets[i]), usize::try_from(offsets[i + 1]));
        let (a, b) = a.ok().zip(b.ok()).ok_or_else(bad)?;
        if a < first || a > b || b > values.len() {
            return Err(bad());
        }
        ranges.push((nulls[i] == 0).then_some((a - first, b - first)));
    }
    let last = usize::try_from(offsets[n]).map_err(|_| bad())?;
    let flat = values[first..last].iter().map(|&v| i64::from(v)).collect();
    Ok((flat, ranges))
}

/// (rows, texts) of the reduced texts of headings with markup, (rows, sources) of image
/// blocks.
pub(super) type Prepared = (
    (Vec<usize>, Vec<PyBackedStr>),
    (Vec<usize>, Vec<Option<PyBackedStr>>),
);

/// strategy, front matter dropped, heading_depth, pack_siblings, breadcrumb_prefix,
/// link_template, id_hash, chunker version, bias; then target, max, min and overlap tokens.
pub(crate) type PolicyTuple = (
    (String, bool, u8, bool, bool, String, String, String, String),
    (i64, i64, i64, i64),
);

/// A document as the core takes it, from the values of the Python call's lists.
pub(crate) fn doc_of<'a>(
    doc_id: &'a str,
    path: &'a str,
    text: &'a str,
    plain_text: bool,
    front_matter_title: Option<&'a str>,
    fields: &'a [PyBackedStr],
) -> Doc<'a> {
    Doc {
        doc_id,
        path,
        text,
        plain_text,
        front_matter_title,
        fields: fields.iter().map(|f| &**f).collect(),
    }
}

/// The core's policy of the Python call's tuple, and the estimate's prose and code weights.
pub(crate) fn policy_of(policy: &PolicyTuple) -> PyResult<(Policy<'_>, Weights, Weights)> {
    let (
        (
            strategy,
            drop_front_matter,
            heading_depth,
            pack_siblings,
            context,
            link_template,
            id_hash,
            chunker_version,
            bias,
        ),
        (target, max, min, overlap),
    ) = policy;
    let (prose, code) = weights(bias, false)
        .zip(weights(bias, true))
        .ok_or_else(|| PyValueError::new_err(format!("unknown bias {bias:?}")))?;
    let policy = Policy {
        strategy,
        drop_front_matter: *drop_front_matter,
        heading_depth: *heading_depth,
        pack_siblings: *pack_siblings,
        target: *target,
        max: *max,
        min: *min,
        overlap: *overlap,
        context: *context,
        link_template,
        id_hash,
        chunker_version,
    };
    Ok((policy, prose, code))
}
