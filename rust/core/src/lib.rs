//! mdchunk's pipeline from decoded text to block columns, without Python.

pub mod blocks;
pub mod estimate;
#[rustfmt::skip]
mod estimate_tables;
pub mod fence;
pub mod frontmatter;
pub mod kind;
pub mod lines;
#[rustfmt::skip]
mod lowercase_tables;
pub mod mdx;
pub mod parse;
pub mod postings;
pub mod pyunicode;
#[rustfmt::skip]
mod pyunicode_tables;
pub mod walk;
