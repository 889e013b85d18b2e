//! Where a chunk's offsets fall in its document: a code point's byte (`Text`), a byte's
//! 1-based line (`LineFinder`).

/// A document's text with its code-point offsets mapped to bytes: the identity for ASCII,
/// else through the byte offset of every STEP-th code point and a short walk from there.
pub(super) struct Text<'a> {
    text: &'a str,
    pub(super) n_chars: usize,
    marks: Option<Vec<usize>>, // byte offset of code point i * STEP
}

const STEP: usize = 64;

impl<'a> Text<'a> {
    pub(super) fn of(text: &'a str) -> Text<'a> {
        if text.is_ascii() {
            return Text {
                text,
                n_chars: text.len(),
                marks: None,
            };
        }
        let mut marks = Vec::with_capacity(text.len() / STEP + 1);
        let mut n_chars = 0;
        for (i, &b) in text.as_bytes().iter().enumerate() {
            if !is_continuation(b) {
                if n_chars % STEP == 0 {
                    marks.push(i);
                }
                n_chars += 1;
            }
        }
        Text {
            text,
            n_chars,
            marks: Some(marks),
        }
    }

    /// The byte offset of code point `offset` (at most the number of code points).
    pub(super) fn byte(&self, offset: usize) -> usize {
        let Some(marks) = &self.marks else {
            return offset;
        };
        if offset == self.n_chars {
            return self.text.len();
        }
        let bytes = self.text.as_bytes();
        let (mut at, mut left) = (marks[offset / STEP], offset % STEP);
        while left > 0 {
            at += 1;
            if !is_continuation(bytes[at]) {
                left -= 1;
            }
        }
        at
    }

    /// `text[a:b]` (empty when b <= a)
    pub(super) fn slice(&self, a: usize, b: usize) -> &'a str {
        if b <= a {
            return "";
        }
        &self.text[self.byte(a)..self.byte(b)]
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The 1-based line of a byte offset: one more than the line endings ("\r\n", "\r" or
/// "\n") that start before it. The endings between the offset asked and the one asked before
/// are counted (chunks come in source order, so that is about one pass over the document).
pub(super) struct LineFinder<'a> {
    bytes: &'a [u8],
    has_cr: bool,
    at: usize,
    before: usize, // line endings that start before `at`
}

impl<'a> LineFinder<'a> {
    pub(super) fn of(text: &'a str) -> LineFinder<'a> {
        let bytes = text.as_bytes();
        let has_cr = bytes.contains(&b'\r');
        LineFinder {
            bytes,
            has_cr,
            at: 0,
            before: 0,
        }
    }

    pub(super) fn line_of(&mut self, offset: usize) -> usize {
        if offset >= self.at {
            self.before += self.starts_within(self.at, offset);
        } else {
            self.before -= self.starts_within(offset, self.at);
        }
        self.at = offset;
        1 + self.before
    }

    /// Line endings that start in `bytes[a..b]`: every "\r", and every "\n" not after one.
    fn starts_within(&self, a: usize, b: usize) -> usize {
        let range = &self.bytes[a..b];
        let count = |byte: u8| range.iter().map(|&c| usize::from(c == byte)).sum::<usize>();
        let lf = count(b'\n');
        if !self.has_cr {
            return lf;
        }
        let cr = count(b'\r');
        let crlf = (a.max(1)..b)
            .filter(|&i| self.bytes[i] == b'\n' && self.bytes[i - 1] == b'\r')
            .count();
        lf + cr - crlf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_points_map_to_bytes() {
        for text in ["", "plain", &"aé日😀\r\n".repeat(40)] {
            let doc = Text::of(text);
            let mut want: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
            want.push(text.len());
            let got: Vec<usize> = (0..=doc.n_chars).map(|i| doc.byte(i)).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn lines_are_found_forwards_and_backwards() {
        let text = "a\r\n\rb\n\nc\r";
        let mut lines = LineFinder::of(text);
        // line endings start at bytes 1 (CRLF), 3, 5, 6, 8
        let want = [1, 1, 2, 2, 3, 3, 4, 5, 5, 6];
        for offset in (0..=9).chain((0..=9).rev()) {
            assert_eq!(lines.line_of(offset), want[offset], "{offset}");
        }
    }
}
