//! chunkmill's pipeline from a document's bytes to block, chunk and posting columns, without Python.
//!
//! - `parse`: a document's bytes to its decoded text (or a reject), and decoded text to
//!   its top-level blocks (kind, level, line and character spans), a batch at a time.
//! - `chunk`: a document's blocks to its chunks: heading paths and context headers,
//!   oversized blocks split by kind, units packed under the token budget, chunk text, spans
//!   and ids.
//! - `tokens`: token counts behind one small interface: the native estimate and, with
//!   the `encodings` feature, exact counts of OpenAI encodings and Hugging Face tokenizers.
//! - `tables`: generated Unicode and estimate tables the other modules read.
//! - `postings`: the BM25 terms and postings of texts.
//! - `pyunicode`: Python's whitespace, word and decimal characters and case mappings.
//! - `threads`: a batch of documents spread over threads, results in document order.

pub mod chunk;
pub mod parse;
pub mod postings;
pub mod pyunicode;
mod tables;
pub mod threads;
pub mod tokens;
