//! Token counting behind one small interface: a batch of texts in, one count per text out.
//! The estimate is native (estimate.rs); a real tokenizer is whatever the caller plugs in
//! (the Python binding calls the tokenizer's `count`). A real tokenizer's count of joined
//! texts is not the sum of its parts, so callers batch exactly the texts they need counted.

use std::convert::Infallible;

use crate::tables::estimate::N_WEIGHTED;
use crate::tokens::estimate::{estimate, weights, EnglishDocument};

/// Counts tokens of a batch of texts (`count(list[str]) -> list[int]` in Python).
pub trait Counter {
    type Error;
    fn count(&mut self, texts: &[&str]) -> Result<Vec<i64>, Self::Error>;

    /// The count of one text.
    fn count_one(&mut self, text: &str) -> Result<i64, Self::Error> {
        Ok(self.count(&[text])?[0])
    }
}

/// The token estimate (`tokens.EstimateCounter`): a bias's weights for prose or code, and
/// the language of the texts' document.
#[derive(Debug, Clone)]
pub struct Estimate {
    weights: [f64; N_WEIGHTED],
    english_document: EnglishDocument,
}

impl Estimate {
    /// None for an unknown bias.
    pub fn new(bias: &str, code: bool, english_document: EnglishDocument) -> Option<Estimate> {
        Some(Estimate {
            weights: weights(bias, code)?,
            english_document,
        })
    }
}

impl Counter for Estimate {
    type Error = Infallible;

    fn count(&mut self, texts: &[&str]) -> Result<Vec<i64>, Infallible> {
        Ok(texts
            .iter()
            .map(|t| estimate(t, &self.weights, self.english_document))
            .collect())
    }
}

/// One token per code point (tests and examples).
#[derive(Debug, Clone, Default)]
pub struct CodePoints;

impl Counter for CodePoints {
    type Error = Infallible;

    fn count(&mut self, texts: &[&str]) -> Result<Vec<i64>, Infallible> {
        Ok(texts.iter().map(|t| t.chars().count() as i64).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_counts_every_text_of_a_batch() {
        let mut e = Estimate::new("balanced", false, None).unwrap();
        let got = e.count(&["Hello world, this is a test.", ""]).unwrap();
        assert_eq!(got, vec![8, 0]);
        assert_eq!(e.count_one("Hello world, this is a test.").unwrap(), 8);
        let mut code = Estimate::new("balanced", true, Some(false)).unwrap();
        assert_eq!(code.count_one("fooBar123 baz_qux(1, 2)").unwrap(), 19);
        assert!(Estimate::new("no such bias", false, None).is_none());
    }
}
