"""The `doc:` keys of `sframe.ksy` as a reader of one section wants them: plain text, about its version.

The `.ksy` describes every version at once ("32 bits wide before version 3",
"in version 3 this is the index entry"); someone looking at a version 1 file
should not read about version 3's attribute blocks. `for_version` keeps the
sentences and parentheses that name no version or name this one, and drops
the rest. The docs themselves are the generated `sframe_docs` module's.
"""

from __future__ import annotations

import re

from sfview.generated.sframe_docs import TYPES

__all__ = ["elsewhere", "field_doc", "for_version", "plain", "type_doc"]

_SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z0-9])")
_PARENTHESIS = re.compile(r"\s*\(([^()]*)\)")
_VERSION = re.compile(r"\b(before |from |added in )?versions? (\d+)(?: and (\d+))?", re.IGNORECASE)


def plain(doc: str) -> str:
    """One paragraph, without the Markdown-ish backticks the `.ksy` puts round names."""
    return " ".join(doc.split()).replace("`", "")


def about(text: str, version: int) -> bool:
    """Whether `text` concerns `version`: it names no version, or names this one
    (`before version 3` names 1 and 2; `from`/`added in version 2` names 2 and later)."""
    mentions = _VERSION.findall(text)
    if not mentions:
        return True
    for how, first, second in mentions:
        how = how.strip().lower()
        if how == "before" and version < int(first):
            return True
        if how in ("from", "added in") and version >= int(first):
            return True
        if not how and version in {int(first), *([int(second)] if second else [])}:
            return True
    return False


def for_version(doc: str, version: int) -> str:
    """`doc` as plain text, without the sentences, clauses and parentheses about other versions."""
    text = _PARENTHESIS.sub(lambda m: m.group(0) if about(m.group(1), version) else "", plain(doc))
    sentences = (_sentence_for_version(sentence, version) for sentence in _SENTENCE_END.split(text))
    return " ".join(sentence for sentence in sentences if sentence)


def elsewhere(doc: str, version: int) -> str:
    """A doc's parenthesis on versions (`version 3; unused before`) when it is not about `version`: what the
    doc says holds in other versions only (a bit unused in this one); else ""."""
    for mention in _PARENTHESIS.findall(plain(doc or "")):
        if _VERSION.search(mention) and not about(mention, version):
            return mention
    return ""


def _sentence_for_version(sentence: str, version: int) -> str:
    """A sentence whose every clause names versions (`32 bits before version 3, 64 in version 3.`)
    keeps the clauses about `version`; another is kept whole or dropped."""
    clauses = sentence.removesuffix(".").split(", ")
    if len(clauses) > 1 and all(_VERSION.search(clause) for clause in clauses):
        kept = [clause for clause in clauses if about(clause, version)]
        return ", ".join(kept) + "." if kept else ""
    return sentence if about(sentence, version) else ""


def type_doc(type_name: str, version: int) -> str:
    """The doc of a `.ksy` type, for `version`."""
    return for_version(TYPES[type_name]["doc"], version)


def field_doc(type_name: str, field: str, version: int) -> str:
    """The doc of one field of a `.ksy` type, for `version` ("" when it is all about other versions)."""
    return for_version(TYPES[type_name]["fields"][field].get("doc", ""), version)
