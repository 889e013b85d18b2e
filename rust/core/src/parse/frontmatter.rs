//! Where front matter is (frontmatter.locate): YAML between `---` lines or TOML between
//! `+++` lines at the very top, closed (a lone `---` is a thematic break).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Toml,
}

/// (format, body start, body end, block end) in bytes: the block ends just after the
/// closing line's content (trailing spaces and tabs left out).
pub fn locate(text: &str) -> Option<(Format, usize, usize, usize)> {
    let bytes = text.as_bytes();
    let fmt = if text.starts_with("---") {
        Format::Yaml
    } else if text.starts_with("+++") {
        Format::Toml
    } else {
        return None;
    };
    let mut pos = 3;
    while pos < bytes.len() && (bytes[pos] == b' ' || bytes[pos] == b'\t') {
        pos += 1;
    }
    pos = match bytes.get(pos) {
        Some(b'\r') if bytes.get(pos + 1) == Some(&b'\n') => pos + 2,
        Some(b'\r') | Some(b'\n') => pos + 1,
        _ => return None,
    };
    let body_start = pos;
    while pos < bytes.len() {
        let content_end = text[pos..]
            .find(['\r', '\n'])
            .map_or(bytes.len(), |k| pos + k);
        let content = text[pos..content_end].trim_end_matches([' ', '\t']);
        let closes = match fmt {
            Format::Yaml => content == "---" || content == "...",
            Format::Toml => content == "+++",
        };
        if closes {
            return Some((fmt, body_start, pos, pos + content.len()));
        }
        pos = match bytes.get(content_end) {
            Some(b'\r') if bytes.get(content_end + 1) == Some(&b'\n') => content_end + 2,
            Some(_) => content_end + 1,
            None => content_end,
        };
        if pos == content_end {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_toml_are_found_only_when_closed() {
        assert_eq!(locate("---\na: 1\n---\nx"), Some((Format::Yaml, 4, 9, 12)));
        assert_eq!(
            locate("--- \r\na\r\n... \r\n"),
            Some((Format::Yaml, 6, 9, 12))
        );
        assert_eq!(locate("+++\na = 1\n+++"), Some((Format::Toml, 4, 10, 13)));
        assert_eq!(locate("---\na: 1\n"), None);
        assert_eq!(locate("----\na\n---\n"), None);
        assert_eq!(locate("+++\na\n---\n"), None);
        assert_eq!(locate(" ---\n---\n"), None);
        assert_eq!(locate("---\n---"), Some((Format::Yaml, 4, 4, 7)));
    }
}
