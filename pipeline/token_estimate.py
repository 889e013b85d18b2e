"""The token estimate: a script-aware count of a text's tokens without a vocabulary.

It counts the characters of a text by class (ASCII letters, letter runs, digits,
punctuation, whitespace, letter/digit and case breaks, CJK ideographs and kana, Hangul, and
every other non-ASCII character by its UTF-8 bytes) and weighs each class with weights
fitted so that the estimate is at least the real count of cl100k and o200k
(``benchmarks/fit_estimate.py``; docs/design.md, "Token estimate"). This module defines the
classes, patterns and weights; the Rust core counts with them (tools/gen_estimate.py writes
its tables from here): whole tables of blocks (``bulk_estimate``), single texts
(``tokens.EstimateCounter``) and every piece it packs. The tests hold the core to the
estimate written in Python from the same definitions (tests/estimate_oracle.py).
"""

from __future__ import annotations

from functools import cache

from chunkmill.pipeline.han_rare import HAN_BYTES, HAN_RARE, HANGUL_BYTES, HANGUL_RARE

# Changes whenever the estimate gives other numbers for the same text (stored blocks carry
# their estimate, so a run does not reuse blocks of another estimate version).
# What each version changed: CHANGELOG.md, Version labels.
ESTIMATE_VERSION = "estimate-5"


def _ranges(*pairs: tuple[int, int]) -> str:
    return "".join(f"{chr(a)}-{chr(b)}" for a, b in pairs)


# CJK symbols and punctuation, kana, CJK ideographs (extension A, unified, compatibility)
# and full-width forms: about one token per character or more in every tokenizer.
CJK_RANGES = ((0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
CJK_CLASS = _ranges(*CJK_RANGES, (0xFF00, 0xFFEF))
# Hangul syllables; the jamo they decompose into (NFD text, as macOS file names and some
# PDF extractions give it) cost a token per byte and count as such (byte_level), the
# compatibility jamo (ㅋㅋ) two or more (few_merges).
HANGUL_RANGES = ((0xAC00, 0xD7AF),)
HANGUL_CLASS = _ranges(*HANGUL_RANGES)
# Forms of the CJK block that the vocabularies split like rare Han characters (1.8-2.0
# tokens a character): full-width ASCII (ＡＢＣ１２３), half-width katakana (ｶﾀｶﾅ) with its
# marks and punctuation, half-width Hangul.
CJK_SPLIT_FORMS = ((0xFF01, 0xFF5E), (0xFF61, 0xFFDC))

# The classes of non-ASCII characters, as code point ranges (the Rust core's estimate,
# rust/core/src/tokens/estimate.rs, reads them off the UTF-8 bytes; tools/gen_estimate.py).
# ``two_byte`` are the characters of two UTF-8 bytes (accented Latin, Greek, Cyrillic,
# Hebrew, Arabic...); ``greek_hebrew``, ``two_byte_rare`` and ``arabic_extended`` are
# two-byte scripts that cost more than the two_byte weight (see
# TWO_BYTE_EXTRA); ``few_merges`` and ``byte_level`` three-byte scripts that cost more than
# the other weight (see THREE_BYTE_EXTRA); ``four_byte`` every character of four bytes.
CLASS_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "cjk": (*CJK_RANGES, (0xFF00, 0xFFEF)),
    "hangul": HANGUL_RANGES,
    "two_byte": ((0x80, 0x7FF),),
    "greek_hebrew": ((0x370, 0x3FF), (0x590, 0x5FF)),
    # IPA, spacing modifiers, combining marks, Hebrew points and cantillation, the
    # Cyrillic supplement, Armenian, Syriac, Thaana, N'Ko
    "two_byte_rare": ((0x250, 0x36F), (0x591, 0x5C7), (0x500, 0x58F), (0x700, 0x7FF)),
    # Arabic vowel marks; the letters Persian, Urdu, Pashto, Sindhi, Kurdish and Uyghur add
    "arabic_extended": ((0x64B, 0x65F), (0x670, 0x6FF)),
    # Sinhala, Thai's neighbour Lao, Tibetan, Myanmar, Georgian, Hangul compatibility jamo
    "few_merges": (
        (0xD80, 0xDFF),
        (0xE80, 0xFFF),
        (0x1000, 0x109F),
        (0x10A0, 0x10FF),
        (0x3130, 0x318F),
    ),
    # Odia, Ethiopic, Cherokee, Canadian syllabics, Mongolian, Tifinagh, Yi, Vai, Hangul
    # jamo (conjoining, and extended A and B)
    "byte_level": (
        (0xB00, 0xB7F),
        (0x1100, 0x11FF),
        (0x1200, 0x167F),
        (0x1800, 0x18AF),
        (0x2D30, 0x2D7F),
        (0xA000, 0xA4CF),
        (0xA500, 0xA63F),
        (0xA960, 0xA97F),
        (0xD7B0, 0xD7FF),
    ),
    "four_byte": ((0x10000, 0x10FFFF),),
    # the Han characters cl100k or o200k does not hold as one token, and those of them
    # left to three byte tokens (benchmarks/han_rare.py)
    "han_rare": (*HAN_RARE, *CJK_SPLIT_FORMS),
    "han_bytes": HAN_BYTES,
    # the Hangul syllables cl100k or o200k does not hold as one token, and those of them
    # left to three (benchmarks/han_rare.py)
    "hangul_rare": HANGUL_RARE,
    "hangul_bytes": HANGUL_BYTES,
}

# name -> pattern counted (non-overlapping matches); the same in Rust's regex (polars) and
# Python's re. ``other`` is derived: the UTF-8 bytes of every non-ASCII character in no
# class above (Indic scripts, Thai, emoji, typographic quotes and dashes...).
CLASSES: dict[str, str] = {
    "letters": r"[A-Za-z]",
    "words": r"[A-Za-z]+",
    "digits": r"[0-9]",
    "numbers": r"[0-9]+",
    "punct": r"[!-/:-@\[-`{-~]",
    "space": r"[\t\n\r ]",
    "controls": r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]",
    **{name: f"[{_ranges(*ranges)}]" for name, ranges in CLASS_RANGES.items()},
    "non_ascii": r"[^\x00-\x7f]",
}
ASCII_CLASSES = ("letters", "words", "digits", "punct", "space", "breaks")
NON_ASCII_CLASSES = ("cjk", "hangul", "two_byte", "other")

# The two_byte weight fits the two-byte scripts BPE vocabularies know well (accented Latin,
# Cyrillic, Arabic). On our own sentences (tests/test_tokens.py) the estimate gave 0.84 of
# cl100k on Greek, 0.81 on Hebrew, 0.41 on Armenian and 0.82 on Urdu: scripts a vocabulary
# barely holds fall back towards a token per byte. So Greek and Hebrew letters count 1.17
# tokens, the letters Persian and Urdu add to Arabic 1.625, and the two-byte characters of
# scripts left to bytes (Armenian, Syriac, Thaana, N'Ko, the Cyrillic supplement, IPA,
# spacing modifiers, combining marks) 2.3: the largest need per character on those
# sentences times 1.1, the margin of the other non-English weights. Added on top of
# two_byte, last in WEIGHTED like "foreign": a text without them keeps its estimate to the
# bit.
TWO_BYTE_EXTRA = {"greek_hebrew": 0.335, "two_byte_rare": 1.465, "arabic_extended": 0.79}

# The same for three-byte scripts, on top of the other weight (0.695 a byte, 2.085 a
# character). cl100k leaves Odia, Ethiopic, Cherokee, the Canadian syllabics, Mongolian,
# Tifinagh, Yi and Vai to bytes or nearly (2.4-3 tokens a character on our own sentences
# and random syllables; the estimate gave 0.67-0.74 of it): they count a token per byte,
# the most a byte-level BPE can spend (``byte_level``). Lao, Tibetan, Sinhala, Myanmar and
# Georgian get a few merges (2.0-2.2 tokens a character; the estimate gave 0.92-1.01): they
# count 0.42 more, the largest need per character on our own sentences (Lao) times 1.1.
# Han characters: cl100k and o200k hold the common Simplified ones as single tokens and
# leave the rest (many Traditional ones) to two or three byte tokens; our own Traditional
# sentences counted 0.91-1.13 of the real count. ``han_rare`` (more than one token alone)
# and ``han_bytes`` (three) count 0.818 and 1.102 more, on top of cjk: the needs of random
# text of each set times 1.1.
# Hangul: of the 11,172 syllables only 129 are one token in both cl100k and o200k, 4,238
# two and 6,805 three; everyday Korean is mostly the 129 (our own sentences: 0.72 tokens a
# character), names and rare words are not (random syllables: 2.6). A syllable counts
# HANGUL (fitted on everyday text), those the vocabularies split (``hangul_rare``) and
# those left to three byte tokens (``hangul_bytes``) HANGUL_EXTRA more each: random
# syllables, with and without spaces between them, then count their real cost times 1.1.
HANGUL, HANGUL_EXTRA = 1.0, 1.1
THREE_BYTE_EXTRA = {
    "few_merges": 0.42,
    "byte_level": 1.39,
    "han_rare": 0.818,
    "han_bytes": 1.102,
    "hangul_rare": HANGUL_EXTRA,
    "hangul_bytes": HANGUL_EXTRA,
}
# Characters of four bytes (emoji, CJK extension B and later, historic scripts, math
# letters) cost up to four tokens (random ones: 2.9-4.0; the other weight gave 2.78): they
# count a token per byte.
FOUR_BYTE_EXTRA = {"four_byte": 1.8}
# "foreign": the ASCII letters of a prose text written in another language than English;
# then the scripts' extras. Last, so that a text without them adds 0.0 and keeps its
# estimate to the last bit.
SCRIPT_EXTRAS = (*TWO_BYTE_EXTRA, *THREE_BYTE_EXTRA, *FOUR_BYTE_EXTRA)

# Byte-level BPE vocabularies (cl100k, o200k, Llama 3's) never merge a digit with what is
# around it: every run of digits is cut into groups of up to three, and the space, comma or
# line break before a number is a token of its own where before a word it would not be.
# The digits weight (0.5 a digit) fits numbers inside prose, and the fit left numeric data
# under-counted: single digits between spaces or line breaks at 0.40 of cl100k, printed
# lists such as "[0, 1, 1]" at 0.47 (code weights), floats and matrices at 0.69-0.87.
# So every run of digits ("numbers") counts NUMBER[group] more: the largest need per run on
# our own numeric texts (tests/helpers.py numeric_texts: arrays, matrices, floats, SVG paths,
# dates, addresses, hex dumps, versions) times 1.1, the margin of the other extras. Its
# price on English documentation is 0.9-3.2 % more estimated tokens (docs/design.md, Token
# estimate). Last in WEIGHTED: a text without digits keeps its estimate to the bit.
NUMBER = {"prose": 1.3, "code": 1.751}
# ASCII control characters (escape, backspace, DEL, form feed...: terminal captures, binary
# debris) are a token each in every byte-level vocabulary, and no class above counts them.
CONTROL = 1.1
WEIGHTED = (
    *ASCII_CLASSES,
    *NON_ASCII_CLASSES,
    "foreign",
    *SCRIPT_EXTRAS,
    "numbers",
    "controls",
)
SCALED = (*ASCII_CLASSES, "numbers")  # the ASCII classes, which the bias scales

# The ASCII letter weights are fitted on English, whose words are whole tokens of every
# BPE vocabulary (about 5 letters a token). Other languages written in Latin letters are
# not: on our own paragraphs in 12 languages cl100k spends 2.5-4 letters a token, and the
# English weights under-counted Finnish to 0.62 of cl100k, Swahili 0.63, Hungarian 0.67,
# Polish and Czech 0.74, Turkish 0.76, Indonesian 0.79, Dutch 0.82, German 0.92. So a
# prose text of at least FOREIGN_MIN_WORDS runs of ASCII letters, fewer than FOREIGN_SHARE
# of which are English function words, counts FOREIGN_LETTER more per ASCII letter
# (fitted on those paragraphs: the largest shortfall per letter times 1.1, the margin of
# the other non-English weights). Code-like kinds are never judged. A text counted on its
# own (no document known) is judged by itself: at least FOREIGN_MIN_WORDS words, fewer than
# FOREIGN_SHARE function words; shorter texts (a heading, a table cell) say too little and
# keep the English weights. A text of a known document follows the document (the share of
# function words over all its blocks): in a document that reads as English no text counts
# as foreign, so its link lists, parameter lists and command lines (few function words,
# already counted 1.2-1.6x cl100k) keep the English weights; in one that does not, every
# text counts as foreign unless it reads as English by itself (an English quotation), so
# its short headings, list items and sentence pieces are not under-counted either.
# The words are ones other Latin-script languages do not use as common words of their own
# ("in", "is", "of", "to", "on", "an", "be", "for", "also", "will", "was" are left out).
ENGLISH_WORDS = (
    "the and that with this are from you your not which when if would should there their "
    "they these those what how than then only been were it its can has into must more "
    "each other using used use does we our all any but such about after before between "
    "because without where while through here"
).split()
ENGLISH_PATTERN = rf"(?-u:\b)(?i-u:{'|'.join(ENGLISH_WORDS)})(?-u:\b)"  # polars (Rust)
FOREIGN_MIN_WORDS = 8
FOREIGN_SHARE = 0.05
FOREIGN_LETTER = 0.26

# Fitted weights (tokens per counted item), rounded up, as printed by
# `python benchmarks/fit_estimate.py` (floor 0.96, penalty 60, margin 1.1; docs/design.md, "Token
# estimate").
# Prose kinds and code-like kinds (the core's CODE_LIKE) have their own ASCII weights; the non-ASCII
# weights are shared (comments and strings in code are prose).
WEIGHTS: dict[str, dict[str, float]] = {
    "prose": {
        "letters": 0.191,
        "words": 0.0,
        "digits": 0.5,
        "punct": 1.025,
        "space": 0.316,
        "breaks": 1.168,
        "cjk": 1.348,
        "hangul": HANGUL,
        "two_byte": 0.835,
        "other": 0.695,
        "foreign": FOREIGN_LETTER,
        **TWO_BYTE_EXTRA,
        **THREE_BYTE_EXTRA,
        **FOUR_BYTE_EXTRA,
        "numbers": NUMBER["prose"],
        "controls": CONTROL,
    },
    "code": {
        "letters": 0.0,
        "words": 1.238,
        "digits": 0.5,
        "punct": 0.613,
        "space": 0.294,
        "breaks": 1.984,
        "cjk": 1.348,
        "hangul": HANGUL,
        "two_byte": 0.835,
        "other": 0.695,
        "foreign": 0.0,
        **TWO_BYTE_EXTRA,
        **THREE_BYTE_EXTRA,
        **FOUR_BYTE_EXTRA,
        "numbers": NUMBER["code"],
        "controls": CONTROL,
    },
}

# bias -> factor on the ASCII weights: ``prose`` counts English-like text leaner (bigger
# chunks, more risk), ``code`` heavier; other scripts keep their fitted weights.
BIAS_FACTORS: dict[str, float] = {"balanced": 1.0, "prose": 0.91, "code": 1.12}


@cache
def weights(bias: str, group: str) -> dict[str, float]:
    factor = BIAS_FACTORS[bias]
    return {name: w * factor if name in SCALED else w for name, w in WEIGHTS[group].items()}


# Breaks: pairs of neighbouring characters where a new token usually starts inside a word
# ("camelCase", "v12", "3px"); each pattern's matches cannot overlap, so counting them is
# counting the pairs.
BREAKS = (r"[a-z][A-Z]", r"[A-Za-z][0-9]", r"[0-9][A-Za-z]")


# A floor of tokens per ASCII letter, whatever the fitted weights say: the code weights count
# a word of letters as one unit (identifiers are short), which would count a 100 kB run of
# letters (a blob, a minified name) as one token; real BPE vocabularies hold at most about
# 8 letters of such a run per token.
LETTER_FLOOR = 0.125
