//! Token counts behind one small interface: a batch of texts in, one count per text out.
//!
//! - `counter`: the `Counter` interface, the estimate's counter and one of code points.
//! - `estimate`: the token estimate: character classes counted in one pass over a text,
//!   a document's language, the weighted sum.
//! - `exact` (feature `encodings`): the exact counters by the names a policy gives them,
//!   alone or several at once.
//! - `encoding` (feature `encodings`): OpenAI's byte-pair encodings, cl100k_base and
//!   o200k_base.
//! - `hf` (feature `encodings`): a Hugging Face tokenizer (`tokenizer.json`).

pub mod counter;
#[cfg(feature = "encodings")]
pub mod encoding;
pub mod estimate;
#[cfg(feature = "encodings")]
pub mod exact;
#[cfg(feature = "encodings")]
pub mod hf;
