//! GitHub's slugs of heading texts, and the anchors of one document's headings.

use std::collections::HashMap;

use crate::pyunicode::{
    is_digit_letter_number_or_connector, is_letter_or_mark, is_other_symbol, lower,
};

/// GitHub's slug of a heading's text: lower-cased; punctuation, symbols and other marks
/// of no letter or number removed (`-` and `_` stay); every space becomes `-`.
pub fn slug(text: &str) -> String {
    let low = lower(text);
    if low.is_ascii() {
        let kept = low
            .bytes()
            .filter(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || b" _-".contains(&c));
        return kept
            .map(|c| if c == b' ' { '-' } else { c as char })
            .collect();
    }
    low.chars()
        .filter(|&c| kept(c))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Whether a slug keeps `c` (lower-cased): space, `-`, letters, marks, decimal digits,
/// letter numbers, connectors, and the symbols Unicode counts as alphabetic (circled and
/// squared Latin letters).
pub fn kept(c: char) -> bool {
    c == ' '
        || c == '-'
        || is_letter_or_mark(c)
        || is_digit_letter_number_or_connector(c)
        || (is_other_symbol(c)
            && (('\u{24b6}'..='\u{24e9}').contains(&c) || ('\u{1f130}'..='\u{1f189}').contains(&c)))
}

/// Anchors of one document's headings, in document order (GitHub's numbering of repeated
/// slugs: `usage`, `usage-1`, `usage-2`); an explicit id is its own anchor, not counted.
#[derive(Debug, Default)]
pub struct Anchors {
    seen: HashMap<String, u64>,
}

impl Anchors {
    pub fn anchor(&mut self, text: &str, explicit: Option<&str>) -> String {
        if let Some(id) = explicit.filter(|id| !id.is_empty()) {
            return id.to_owned();
        }
        let base = slug(text);
        let mut result = base.clone();
        while self.seen.contains_key(&result) {
            let n = self
                .seen
                .get_mut(&base)
                .expect("the base slug is seen first");
            *n += 1;
            result = format!("{base}-{n}");
        }
        self.seen.insert(result.clone(), 0);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_as_github_makes_them() {
        assert_eq!(slug("What's new in v2.0?"), "whats-new-in-v20");
        assert_eq!(slug("  Leading  "), "--leading--");
        assert_eq!(slug("Привет, мир"), "привет-мир");
        assert_eq!(slug("Emoji 🎉 party"), "emoji--party");
        assert_eq!(slug("ΟΔΟΣ İ Ⓐ"), "οδος-i\u{307}-ⓐ");
    }

    #[test]
    fn anchors_number_repeats() {
        let mut a = Anchors::default();
        let got: Vec<String> = ["Usage", "Usage", "Usage-1", "Usage", "Other"]
            .iter()
            .map(|t| a.anchor(t, None))
            .collect();
        assert_eq!(got, ["usage", "usage-1", "usage-1-1", "usage-2", "other"]);
        assert_eq!(a.anchor("Usage", Some("run")), "run");
        assert_eq!(a.anchor("Usage", None), "usage-3");
    }
}
