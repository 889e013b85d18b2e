//! The inline reader of a paragraph that starts like an image: is it exactly one image,
//! optionally wrapped in a link, and what is its alt text.

use std::ops::Range;

use pulldown_cmark::{Tag, TagEnd};

use super::inline::{Inline, Leaf};
use crate::parse::kind::Kind;
use crate::parse::Block;
use crate::pyunicode::{collapse, is_blank};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Empty,
    Link,
    Image,
    Done,
    DoneInLink,
    LinkDone,
}

/// Tells a paragraph that is exactly one image, optionally wrapped in a link.
pub(super) struct Image {
    para: usize,
    state: State,
    alt: String,
    nested: usize,
    linked: bool,
}

impl Image {
    pub(super) fn new(para: usize) -> Image {
        Image {
            para,
            state: State::Empty,
            alt: String::new(),
            nested: 0,
            linked: false,
        }
    }
}

impl Inline for Image {
    fn start(&mut self, tag: &Tag, rng: &Range<usize>) -> bool {
        if self.state == State::Image {
            self.nested += 1;
            return true;
        }
        match tag {
            Tag::Image { .. } => {
                let at = self.para + usize::from(self.state == State::Link);
                if rng.start == at && matches!(self.state, State::Empty | State::Link) {
                    self.linked = self.state == State::Link;
                    self.state = State::Image;
                    return true;
                }
            }
            Tag::Link { .. } if self.state == State::Empty && rng.start == self.para => {
                self.state = State::Link;
                return true;
            }
            _ => {}
        }
        false
    }

    fn end(&mut self, tag: &TagEnd) -> bool {
        if self.state == State::Image {
            if self.nested > 0 {
                self.nested -= 1;
            } else {
                self.state = if self.linked {
                    State::DoneInLink
                } else {
                    State::Done
                };
            }
            return true;
        }
        if self.state == State::DoneInLink && matches!(tag, TagEnd::Link) {
            self.state = State::LinkDone;
            return true;
        }
        false
    }

    fn leaf(&mut self, leaf: Leaf, _: &Range<usize>) -> bool {
        if self.state == State::Image {
            match leaf {
                Leaf::Text(t) | Leaf::Code(t) => self.alt.push_str(t),
                Leaf::Break => self.alt.push(' '),
                Leaf::Other => {}
            }
            return true;
        }
        matches!(leaf, Leaf::Text(t) if is_blank(t))
    }

    fn close(&mut self, block: &mut Block) {
        if matches!(self.state, State::Done | State::LinkDone) {
            block.kind = Kind::Image;
            block.alt = Some(collapse(&self.alt));
        }
    }
}
