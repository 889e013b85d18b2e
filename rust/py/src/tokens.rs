//! chunkmill._core.count_tokens and tokens_added: exact token counts by the counters the
//! core runs itself, named as a policy names them.

use std::panic::{catch_unwind, AssertUnwindSafe};

use chunkmill_core::tokens::exact::Exact;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The encodings counted here by name (tokens.CORE_ENCODINGS).
    m.add(
        "ENCODINGS",
        chunkmill_core::tokens::encoding::NAMES.to_vec(),
    )?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(tokens_added, m)?)?;
    Ok(())
}
