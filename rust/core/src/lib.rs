//! chunkmill's pipeline from decoded text to block, chunk and posting columns, without Python.

pub mod assemble;
pub mod blocks;
pub mod chunk;
pub mod context;
pub mod counter;
pub mod document;
#[cfg(feature = "encodings")]
pub mod encoding;
pub mod estimate;
#[cfg(feature = "encodings")]
pub mod exact;
#[rustfmt::skip]
mod estimate_tables;
pub mod fence;
pub mod frontmatter;
pub mod heading;
#[cfg(feature = "encodings")]
pub mod hf;
pub mod kind;
pub mod lines;
#[rustfmt::skip]
mod lowercase_tables;
pub mod mdx;
pub mod pack;
pub mod parse;
pub mod parsed;
pub mod postings;
pub mod pyunicode;
#[rustfmt::skip]
mod pyunicode_tables;
pub mod section;
pub mod split;
pub mod threads;
pub mod walk;
