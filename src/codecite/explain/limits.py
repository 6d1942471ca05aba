"""The named limits and kinds an explanation is built with."""

from __future__ import annotations

#: Kinds of chunk that are definitions (documented, drawn, resolved).
DEFINITION_KINDS = frozenset({"function", "method", "class"})
#: Kinds of chunk that can be explained: a documented constant too (its doc, its value,
#: the code that reads it).
EXPLAINED_KINDS = DEFINITION_KINDS | {"constant"}
#: Call sites quoted as usage examples.
MAX_USAGES = 3
#: Callers, callees, tests and members listed at most.
MAX_LISTED = 10
#: Asserting lines quoted per test.
MAX_ASSERTS = 3
#: Lines one quoted call (or signature) may span.
MAX_CALL_LINES = 5
MAX_SIGNATURE_LINES = 15
#: Characters of a doc comment's prose shown after its first sentence.
DETAILS_CHARS = 600
#: Graph edges read per part of a definition and relation.
MAX_EDGES = 1000
#: Chunks of callers / tests / callees given to an LLM as context, each.
LLM_CONTEXT_EACH = 3
#: The role of the definition's own chunks among an explanation's sources.
ROLE_SELF = "the symbol to document"
