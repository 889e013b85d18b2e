"""Run limits: options that bound what one document may cost. They are not policy (they do
not change the chunks of a document that stays within them), so they are not hashed."""

DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # documents larger than this are rejected (too_large)
