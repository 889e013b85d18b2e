//! mdchunk's pipeline from decoded text to block columns, without Python.

pub mod blocks;
pub mod counter;
pub mod estimate;
#[rustfmt::skip]
mod estimate_tables;
pub mod fence;
pub mod frontmatter;
pub mod kind;
pub mod lines;
pub mod mdx;
pub mod parse;
pub mod pyunicode;
#[rustfmt::skip]
mod pyunicode_tables;
pub mod split;
pub mod walk;
