"""User-facing errors: one line that names the problem and the fix."""
from __future__ import annotations


class FedlabError(Exception):
    """A user mistake or an unmet precondition; printed as one line, never a traceback."""


def utf8_problem(text: str) -> str | None:
    """Why ``text`` cannot be encoded as UTF-8, or None. Command-line bytes that are not UTF-8
    reach Python as lone surrogates (surrogateescape); JSON can carry lone surrogates too."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
            return f"byte 0x{code - 0xDC00:02x} at character {exc.start + 1} is not UTF-8"
        return f"a lone surrogate U+{code:04X} at character {exc.start + 1}"
