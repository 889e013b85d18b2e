//! Python's notion of whitespace, word and decimal characters (str.isspace, re's \w and
//! \d), its case mappings (str.lower, str.casefold) and the general categories that slugs
//! ask about, from tables generated with the project's Python: Rust's `char::is_whitespace`
//! lacks U+001C..U+001F, Rust has no case folding, and its Unicode version differs from
//! Python's.

use crate::tables::pyunicode::{
    CASED, CASEFOLD, CASE_IGNORABLE, DECIMAL, DIGIT_LETTER_NUMBER_OR_CONNECTOR, LETTER_OR_MARK,
    LOWER, OTHER_SYMBOL, SPACE, WORD,
};

pub(crate) fn within(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    let i = table.partition_point(|&(_, hi)| hi < cp);
    i < table.len() && table[i].0 <= cp
}

/// `c.isspace()`
pub fn is_space(c: char) -> bool {
    if c.is_ascii() {
        return matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ');
    }
    within(SPACE, c)
}

/// `re.match(r"\w", c)` (str pattern): `c.isalnum() or c == "_"`
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    within(WORD, c)
}

/// `c.isdecimal()` (re's \d)
pub fn is_decimal(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    within(DECIMAL, c)
}

/// Python's `str.splitlines()` line boundaries (`\r\n` splits as `\r` then `\n`, which
/// gives an empty line between them: callers that skip blank lines see the same lines).
pub fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\x0b'
            | '\x0c'
            | '\r'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// `not s.strip()`
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// `s.strip()`
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// `s.rstrip()`
pub fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// `" ".join(s.split())`
pub fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(is_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `s.split()[0]` when `s.split()` is not empty
pub fn first_word(s: &str) -> Option<&str> {
    s.split(is_space).find(|w| !w.is_empty())
}

/// `unicodedata.category(c)` starts with L or M
pub fn is_letter_or_mark(c: char) -> bool {
    within(LETTER_OR_MARK, c)
}

/// `unicodedata.category(c)` is Nd, Nl or Pc
pub fn is_digit_letter_number_or_connector(c: char) -> bool {
    within(DIGIT_LETTER_NUMBER_OR_CONNECTOR, c)
}

/// `unicodedata.category(c) == "So"`
pub fn is_other_symbol(c: char) -> bool {
    within(OTHER_SYMBOL, c)
}

fn mapped(table: &'static [(u32, &'static str)], c: char) -> Option<&'static str> {
    let cp = c as u32;
    table
        .binary_search_by_key(&cp, |&(k, _)| k)
        .ok()
        .map(|i| table[i].1)
}

const CAPITAL_SIGMA: char = '\u{3a3}';

/// `s.lower()`: full lower-case mappings, and a capital sigma that ends a word (a cased
/// letter before it, none after it, case-ignorable characters skipped) becomes final.
pub fn lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c == CAPITAL_SIGMA {
            out.push(if final_sigma(&s[..i], &s[i + c.len_utf8()..]) {
                '\u{3c2}'
            } else {
                '\u{3c3}'
            });
        } else if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            match mapped(LOWER, c) {
                Some(m) => out.push_str(m),
                None => out.push(c),
            }
        }
    }
    out
}

fn final_sigma(before: &str, after: &str) -> bool {
    let ignorable = |c: &char| within(CASE_IGNORABLE, *c);
    let cased = |c: Option<char>| c.is_some_and(|c| within(CASED, c));
    cased(before.chars().rev().find(|c| !ignorable(c)))
        && !cased(after.chars().find(|c| !ignorable(c)))
}

/// `s.casefold()`: full case folding, character by character.
pub fn casefold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match mapped(CASEFOLD, c) {
            Some(m) => out.push_str(m),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_whitespace_includes_the_separators() {
        for c in [
            '\t', '\n', '\x0b', '\x0c', '\r', '\x1c', '\x1f', ' ', '\u{85}', '\u{a0}',
        ] {
            assert!(is_space(c), "{c:?}");
        }
        for c in ['\u{3000}', '\u{2028}', '\u{202f}'] {
            assert!(is_space(c), "{c:?}");
        }
        for c in ['a', '\u{200b}', '\u{feff}', '\x1b'] {
            assert!(!is_space(c), "{c:?}");
        }
    }

    #[test]
    fn words_and_decimals_follow_python() {
        assert!(is_word('é') && is_word('_') && is_word('²') && !is_word('\u{301}'));
        assert!(is_decimal('٣') && !is_decimal('²') && !is_decimal('a'));
    }

    #[test]
    fn strip_split_and_collapse() {
        assert_eq!(strip("\x1c a b \u{3000}"), "a b");
        assert_eq!(rstrip(" a \x1f"), " a");
        assert_eq!(collapse(" a \n\t b\x1dc "), "a b c");
        assert_eq!(first_word("  rust ignore"), Some("rust"));
        assert_eq!(first_word(" \x1e "), None);
        assert!(is_blank(" \x1c\u{2029}") && !is_blank(" x"));
    }

    #[test]
    fn lower_follows_python() {
        assert_eq!(lower("ΑΣ ΣΑΣ."), "ας σας.");
        assert_eq!(lower("Σ"), "σ");
        assert_eq!(lower("AΣ\u{301}"), "aς\u{301}");
        assert_eq!(lower("AΣ\u{301}B"), "aσ\u{301}b");
        assert_eq!(lower("İx"), "i\u{307}x");
        assert_eq!(lower("ẞ K"), "ß k");
    }

    #[test]
    fn casefold_is_full_folding() {
        assert_eq!(casefold("Straße ς"), "strasse σ");
        assert_eq!(casefold("ﬁ İ"), "fi i\u{307}");
        assert_eq!(casefold("ABC"), "abc");
    }

    #[test]
    fn categories_of_unicode_14() {
        assert!(is_letter_or_mark('é') && is_letter_or_mark('\u{301}') && !is_letter_or_mark('1'));
        assert!(
            is_digit_letter_number_or_connector('٣') && is_digit_letter_number_or_connector('Ⅻ')
        );
        assert!(
            is_digit_letter_number_or_connector('‿') && !is_digit_letter_number_or_connector('²')
        );
        assert!(is_other_symbol('Ⓐ') && !is_other_symbol('a'));
        // assigned after Unicode 14 (U+1FAE8 SHAKING FACE, Unicode 15): unassigned here
        assert!(!is_other_symbol('\u{1fae8}') && !is_letter_or_mark('\u{1fae8}'));
    }
}
