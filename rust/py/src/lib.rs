//! chunkmill._core: the Python face of chunkmill-core. Inputs are converted in bulk, the work
//! runs without holding the interpreter, outputs come back as Arrow-ready buffers (native
//! byte order) or, for the mostly empty columns, lists. A panic never crosses into Python:
//! it is caught here and raised as RuntimeError.
//!
//! - `documents`: the documents stage of raw documents' bytes.
//! - `blocks`: the blocks stage of decoded documents, block columns as Arrow buffers.
//! - `estimates`: the token estimate of a table of texts, and each document's language.
//! - `tokens`: exact token counts by the core's counters (`count_tokens`, `tokens_added`).
//! - `chunk`: the chunks stage of a batch in one call (`chunk_documents`).
//! - `chunk_pass`: decoded documents to chunk columns in one call, under the estimate.
//! - `context`, `section`, `pack`, `split`: the core's steps of the chunks stage one by one
//!   (heading text, context headers, sections, the packer, a block's pieces).
//! - `postings`: the BM25 terms and postings of texts.
//! - `strings`: Python strings and Arrow buffers read in place, and buffers written.

mod blocks;
mod chunk;
mod chunk_pass;
mod context;
mod documents;
mod estimates;
mod pack;
mod postings;
mod section;
mod split;
mod strings;
mod tokens;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    documents::register(m)?;
    blocks::register(m)?;
    estimates::register(m)?;
    tokens::register(m)?;
    chunk::register(m)?;
    chunk_pass::register(m)?;
    context::register(m)?;
    pack::register(m)?;
    postings::register(m)?;
    section::register(m)?;
    split::register(m)?;
    Ok(())
}
