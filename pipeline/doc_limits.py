"""Run limits: options that bound what one document may cost. They are not policy (they do
not change the chunks of a document that stays within them), so they are not hashed."""

DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # documents larger than this are rejected (too_large)
# A worker that works longer than this on one batch, or one document, is stopped and the
# document rejected (timeout). Ordinary documents take milliseconds; 8 MB about 10 s.
DEFAULT_DOC_TIMEOUT = 60.0
# ... or whose resident memory grows past this (too_much_memory): about 8 MB of markdown.
DEFAULT_DOC_MEMORY_MB = 1024
