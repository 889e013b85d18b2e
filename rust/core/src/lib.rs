//! mdchunk's pipeline from decoded text to block columns, without Python.

pub mod fence;
pub mod frontmatter;
pub mod lines;
pub mod pyunicode;
#[rustfmt::skip]
mod pyunicode_tables;
