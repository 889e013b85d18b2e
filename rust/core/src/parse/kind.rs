//! Block kinds, in a fixed order that is part of the schema (the same order as the Python
//! side's BlockKind).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    FrontMatter,
    Heading,
    Paragraph,
    List,
    Table,
    Code,
    Blockquote,
    Html,
    ThematicBreak,
    MdxEsm,
    MdxJsx,
    Image,
}

impl Kind {
    pub const ALL: [Kind; 12] = [
        Kind::FrontMatter,
        Kind::Heading,
        Kind::Paragraph,
        Kind::List,
        Kind::Table,
        Kind::Code,
        Kind::Blockquote,
        Kind::Html,
        Kind::ThematicBreak,
        Kind::MdxEsm,
        Kind::MdxJsx,
        Kind::Image,
    ];

    /// Kinds the estimate counts with its code weights (block_kinds.CODE_LIKE).
    pub fn code_like(self) -> bool {
        matches!(self, Kind::Code | Kind::MdxEsm | Kind::MdxJsx)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::FrontMatter => "front_matter",
            Kind::Heading => "heading",
            Kind::Paragraph => "paragraph",
            Kind::List => "list",
            Kind::Table => "table",
            Kind::Code => "code",
            Kind::Blockquote => "blockquote",
            Kind::Html => "html",
            Kind::ThematicBreak => "thematic_break",
            Kind::MdxEsm => "mdx_esm",
            Kind::MdxJsx => "mdx_jsx",
            Kind::Image => "image",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{}", k.name());
        }
    }
}
