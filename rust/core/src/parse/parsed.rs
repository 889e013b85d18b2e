//! The blocks of a batch with what packing needs of them, in one pass: each block's token
//! estimate, each document's language, and the headings whose inline markup is left to
//! the reference inline parser.

use crate::chunk::heading::clean_blocks;
use crate::parse::blocks::{blocks_in_threads, Columns, Document};
use crate::parse::kind::Kind;
use crate::tokens::estimate::estimates_and_english;

/// The blocks of every document (`cols`) and, per block, its code points, its estimate
/// under the bias and, for a heading whose cleaned source keeps inline markup, that source
/// (`markup`); per document its rows (`runs`: first and end row; empty for a document
/// left to the reference parser) and whether it reads as English (`english`).
pub struct Parsed {
    pub cols: Columns,
    pub n_chars: Vec<i32>,
    pub est: Vec<i32>,
    pub markup: Vec<Option<String>>,
    pub runs: Vec<(usize, usize)>,
    pub english: Vec<bool>,
}

impl Parsed {
    /// The text of block `i` (a slice of its document).
    pub fn text<'t>(&self, docs: &[Document<'t>], i: usize) -> &'t str {
        let d = self.cols.doc[i] as usize;
        &docs[d].text[self.cols.byte_start[i]..self.cols.byte_end[i]]
    }
}

/// The pass over `docs` (spread over `threads` threads); None for an unknown bias.
pub fn parsed(docs: &[Document], bias: &str, threads: usize) -> Option<Parsed> {
    let cols = blocks_in_threads(docs, threads);
    let texts: Vec<&str> = (0..cols.doc.len())
        .map(|i| &docs[cols.doc[i] as usize].text[cols.byte_start[i]..cols.byte_end[i]])
        .collect();
    let code: Vec<bool> = cols.kind.iter().map(|k| k.code_like()).collect();
    let (n_chars, est, mut english) = estimates_and_english(&texts, &code, &cols.doc, bias)?;
    english.resize(docs.len(), true); // a document with no blocks has no text to judge
    let heads: Vec<usize> = (0..texts.len())
        .filter(|&i| cols.kind[i] == Kind::Heading)
        .collect();
    let head_texts: Vec<&str> = heads.iter().map(|&i| texts[i]).collect();
    let mut markup = vec![None; texts.len()];
    for (&i, c) in heads.iter().zip(clean_blocks(&head_texts)) {
        if !c.plain {
            markup[i] = Some(c.text);
        }
    }
    let mut runs = Vec::with_capacity(docs.len());
    let mut i = 0;
    for d in 0..docs.len() {
        let start = i;
        while i < cols.doc.len() && cols.doc[i] as usize == d {
            i += 1;
        }
        runs.push((start, i));
    }
    Some(Parsed {
        cols,
        n_chars,
        est,
        markup,
        runs,
        english,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document<'_> {
        Document {
            text,
            markdown: true,
            mdx: false,
        }
    }

    #[test]
    fn runs_cover_each_documents_blocks_and_skip_empty_ones() {
        let docs = [doc("# A\n\ntext\n"), doc(""), doc("# B [link](u)\n")];
        let p = parsed(&docs, "balanced", 2).unwrap();
        assert_eq!(p.runs, vec![(0, 2), (2, 2), (2, 3)]);
        assert!(p.text(&docs, 1).starts_with("text"));
        assert_eq!(p.markup[0], None);
        assert!(p.markup[2].as_deref().is_some_and(|m| m == "B [link](u)"));
        assert_eq!(p.english.len(), 3);
    }

    #[test]
    fn an_unknown_bias_is_none() {
        assert!(parsed(&[doc("x")], "nope", 1).is_none());
    }
}
