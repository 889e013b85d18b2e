//! Tables generated from the Python side's references (never edited by hand: each file
//! names the tool under tools/ that writes it), as sorted code-point ranges or constants.
//!
//! - `pyunicode`: Python's whitespace, word and decimal classes and case mappings.
//! - `estimate`: the token estimate's character classes and weights.
//! - `lowercase`: the Cased and Case_Ignorable classes that decide a final sigma.
//! - `incb`: the Indic conjunct classes (InCB Linker, Consonant, Extend) of grapheme
//!   clusters.

#[rustfmt::skip]
pub(crate) mod estimate;
#[rustfmt::skip]
pub(crate) mod incb;
#[rustfmt::skip]
pub(crate) mod lowercase;
#[rustfmt::skip]
pub(crate) mod pyunicode;
