//! Python's notion of whitespace, word and decimal characters (str.isspace, re's \w and
//! \d), from tables generated with the project's Python: Rust's `char::is_whitespace` lacks
//! U+001C..U+001F, and its Unicode version differs from Python's.

use crate::pyunicode_tables::{DECIMAL, SPACE, WORD};

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
}
