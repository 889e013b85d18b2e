//! The line table of a text (parse.Lines): lines end at "\r\n", "\r" or "\n" only.

/// Byte offsets of every line's start and content end (its line ending excluded). A final
/// line ending gives a last empty line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    pub starts: Vec<usize>,
    pub ends: Vec<usize>,
}

impl Lines {
    pub fn of(text: &str) -> Lines {
        let bytes = text.as_bytes();
        let (mut starts, mut ends) = (vec![0], Vec::new());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    ends.push(i);
                    starts.push(i + 1);
                }
                b'\r' => {
                    ends.push(i);
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        ends.push(bytes.len());
        Lines { starts, ends }
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Line `i` without its ending.
    pub fn line<'t>(&self, text: &'t str, i: usize) -> &'t str {
        &text[self.starts[i]..self.ends[i]]
    }
}

/// Number of line endings in `text` ("\r\n" counts once).
pub fn count_breaks(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut n = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            n += 1;
        }
    }
    n
}

impl Lines {
    /// The same table in code points (Python str offsets): (starts, ends).
    pub fn in_chars(&self, text: &str) -> (Vec<usize>, Vec<usize>) {
        if text.is_ascii() {
            return (self.starts.clone(), self.ends.clone());
        }
        let (mut starts, mut ends) = (
            Vec::with_capacity(self.len()),
            Vec::with_capacity(self.len()),
        );
        let mut at = 0; // code points before self.starts[i]
        for i in 0..self.len() {
            let (s, e) = (self.starts[i], self.ends[i]);
            starts.push(at);
            at += text[s..e].chars().count();
            ends.push(at);
            // the line ending is ASCII: its bytes are its code points
            at += self.starts.get(i + 1).map_or(0, |&next| next - e);
        }
        (starts, ends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> (Vec<usize>, Vec<usize>) {
        let l = Lines::of(text);
        (l.starts, l.ends)
    }

    #[test]
    fn line_endings_are_lf_crlf_and_cr_only() {
        assert_eq!(table(""), (vec![0], vec![0]));
        assert_eq!(table("a\n"), (vec![0, 2], vec![1, 2]));
        assert_eq!(table("a\r\nb\rc\nd"), (vec![0, 3, 5, 7], vec![1, 4, 6, 8]));
        assert_eq!(table("a\u{2028}b\x0cc"), (vec![0], vec![7]));
        assert_eq!(table("\r\r\n"), (vec![0, 1, 3], vec![0, 1, 3]));
    }

    #[test]
    fn breaks_and_code_points() {
        assert_eq!(count_breaks("a\r\nb\rc\n"), 3);
        let text = "é\r\nab\r日本";
        let (starts, ends) = Lines::of(text).in_chars(text);
        assert_eq!((starts, ends), (vec![0, 3, 6], vec![1, 5, 8]));
    }
}
