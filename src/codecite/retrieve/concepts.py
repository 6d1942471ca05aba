"""The words code uses for what a user describes in their own words (issue 20): a
product manager asks how long a request may take "before the server gives up"; the
code says ``timeout``. A short question whose words match one of :data:`_CONCEPTS` is
searched a second time with the code's words added (a list of its own in the fusion,
:mod:`.search`), its answer's evidence looks for those words in lines too, and
whether to answer reads the question's words as found where the code's words are
(:mod:`codecite.answer.abstain`).

The table is general software vocabulary, by transparent rules (no model): HTTP and
web serving, command-line tools, background jobs, sessions and authentication. It
names no project's own identifiers. Each entry is (a pattern over the question, the
words code writes for it); the words are plain tokens, as the keyword index holds them
(identifier parts: ``max_width`` is found by ``max`` and ``width``).
"""

from __future__ import annotations

import re
from functools import lru_cache

# fmt: off
_CONCEPTS: tuple[tuple[str, str], ...] = (
    # time limits and waiting
    (r"gives? up|giving up|stops? waiting|hangs?|hung|stuck|takes? too long|too slow|"
     r"how long (can|may|does) .{0,40}(take|run|wait)", "timeout timeouts"),
    (r"(results?|data|records?|entries|information) .{0,30}(kept|stored|retained|remembered)|"
     r"(keep|store|retain|remember)s? .{0,30}(results?|data|records?|entries)|"
     r"how long .{0,40}(kept|stored|retained|around|last)", "ttl expire expires"),
    (r"how often|every (few |so many )?(seconds?|minutes?|hours?)|periodic\w*|"
     r"clean(s|ed)? up|sweep\w*", "interval period maintenance"),
    (r"\bretr(y|ies|ied)\b|try again|tries again|re-?attempt\w*", "retry retries attempts"),
    (r"(machine|worker|process|server|host)s? .{0,40}\b(dies|died|crash\w*|killed|goes "
     r"away|disappears?|vanish\w*)|\b(dies|died|killed) (halfway|mid|during|while)",
     "abandoned heartbeat orphaned killed"),
    (r"(handler|request|view|endpoint|route|callback|function)s? .{0,20}\b(crash\w*|"
     r"blows? up|throws?|panics?)", "panic recover exception 500"),
    (r"\b(restart\w*|reload\w*|without downtime|zero.downtime|graceful\w*)\b",
     "reload graceful restart"),
    (r"time limits?|deadlines?|(run|runs|running|take|takes) .{0,30}before (it|it's|they|"
     r"they're|its|it is) (stopped|killed|cancell?ed|aborted)", "timeout"),
    (r"(own|separate|child|new|forked) process(es)?|forks?|forked", "fork spawn process"),
    (r"(off|blocks?|blocking) the event loop|non-async|not async|synchronous|sync "
     r"(functions?|endpoints?|views?|handlers?)", "threadpool thread executor"),
    # sizes and limits
    (r"\b(compress\w*|bandwidth|smaller (responses|payloads?))\b", "gzip deflate compress"),
    (r"\b(huge|very large|too (big|large)|big (files?|uploads?|bodies|body|requests?))\b",
     "max size limit"),
    (r"\b(wide|wider|width|narrow)\b", "width"),
    (r"\b(in memory|spills?|temporary files?|to disk|on disk)\b",
     "memory spool tempfile max"),
    (r"\blongest\b|\btoo long\b|\blength of\b", "max length limit"),
    (r"\b(a|any|the) (cap|ceiling) (on|of|for)\b|\bcapped\b", "max limit"),
    (r"(longest|long|length of|size of)( an?| the)? (urls?|uris?|links?|request lines?)",
     "request line uri limit"),
    (r"\bmiddlewares? (steps?|layers?|stack\w*|chain\w*)|(steps?|layers?|stack|chain) of "
     r"middlewares?|middlewares? .{0,30}\b(stack|chain)(ed|s)?\b", "handlers chain stack"),
    # HTTP behaviour
    (r"\b(visitors?|web ?site users?)\b", "client request"),
    (r"\bendpoints?\b", "route routes handler"),
    (r"(page|url|path|route|link)s? .{0,30}(does ?n.t|do ?n.t|not|never) (exist|have|match|"
     r"found)|(no|missing|unknown) (page|route|url)|not found|broken links?", "404 notfound"),
    (r"wrong (http )?(method|verb)|(method|verb) .{0,30}(not (allowed|supported)|isn.t "
     r"(allowed|supported)|only supports?)", "405 method allowed"),
    (r"\b(resume\w*|interrupted downloads?|part of (a|the|an)? ?(large |big )?file|"
     r"partial (content|downloads?)|byte ranges?)\b", "range ranges 206 partial"),
    (r"\.\.|dot.dot|outside (of )?(the |our |its )?(public |static |assets? )*"
     r"(folder|directory|dir|root)|path traversal|directory traversal",
     "traversal realpath commonpath"),
    (r"\b(real|original|actual|true|client'?s?|visitor'?s?|user'?s?) ip\b|x-forwarded",
     "forwarded proxy remote addr"),
    (r"\b(over|via|through) https\b|came in (over|via) https|secure connection",
     "scheme https secure forwarded"),
    (r"\bcross.(origin|site|domain)|other (domains?|sites?|origins?)\b", "cors origin"),
    (r"\b(domain|host ?name)s? .{0,30}(allowed|list|trusted)|allowed hosts?|(unknown|"
     r"untrusted|wrong) (domain|host)", "host allowed trusted"),
    (r"\b(upper.?case|lower.?case|capitali[sz]\w*|case.?(in)?sensitiv\w*)\b",
     "case sensitive lower"),
    (r"\btrailing slash\w*\b", "slash trailing redirect strict"),
    # sessions, cookies and sign-in
    (r"\b(sessions?|log.?ins?|sign.?ins?|logged in|signed in|cookies?|tokens?)\b.{0,30}"
     r"\b(stays? valid|valid for|lasts?|expir\w*|time.?outs?)\b|"
     r"how long .{0,30}\b(logged|signed) in\b",
     "lifetime expire expires expiration max age"),
    (r"\b(username|user name)s?\b.{0,30}\bpasswords?( (prompt|dialog|box)s?)?\b|"
     r"\bpassword prompt\b|"
     r"\blogin prompt\b", "basic auth realm authorization"),
    (r"hidden from (page )?scripts|javascript can.?t read|only (over|via) https",
     "httponly secure samesite"),
    (r"\b(tamper\w*|forg(e|es|ed|ery|eries|ing)|edit(ing)? (it|the cookie|their session))\b",
     "signed signature secret"),
    # command-line tools
    (r"\b(forg[eo]t\w*|omit\w*|leaves? out|left out|leaves? off|left off)\b", "missing"),
    (r"\b(mistyp\w*|typos?|misspel\w*|did you mean|close matches?)\b",
     "suggest close matches similar"),
    (r"\bexit (code|status)\b|\bscripts? calling\b", "exit code status"),
    (r"\bctrl.?c\b|\binterrupt\w*\b|\bkeyboard ?interrupt\b", "abort interrupt keyboard"),
    (r"\btab.complet\w*|\bautocomplet\w*|\b(bash|zsh|fish|powershell)\b",
     "completion complete shell"),
    (r"\b(yes/no|on/off|true/false|boolean)\b|'(on|off|yes|no|y|n|1|0)'",
     "bool boolean true false"),
    (r"\b(env(ironment)? var\w*|environment)\b", "envvar environ env"),
    (r"\bhelp (screen|text|page|output)\b", "help format formatter"),
    (r"\bcolou?r(ed|s)?\b", "color style ansi"),
    # process model and work
    # processes and threads are not one another ("How many worker processes run?" is
    # not answered by the number of threads)
    (r"\b(how many|number of) (workers?|(worker )?process(es)?)\b|(worker|process)(es|s)? "
     r"(run|start)", "workers processes"),
    (r"\b(how many|number of) (worker )?threads?\b|threads? (run|start)", "threads"),
    (r"\bdepends? on|waits? (on|for) (other|another|unfinished)|after (another|other) "
     r"jobs?\b", "depends dependency dependencies deferred"),
    (r"\b(schedul\w*|later|at a (given|set|certain) time|delay(ed)?)\b",
     "schedule scheduled enqueue at"),
)
# fmt: on


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    return tuple(
        (re.compile(rf"(?<!\w)(?:{p})(?!\w)", re.I), tuple(words.split())) for p, words in _CONCEPTS
    )


def concept_matches(text: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each concept ``text`` describes: (the words of ``text`` that describe it, in
    lower case, and the code's words for it), in the table's order."""
    out = []
    for pattern, words in _compiled():
        for m in pattern.finditer(text):
            out.append((tuple(w.lower() for w in re.findall(r"\w+", m.group(0))), words))
    return out


def concept_terms(text: str) -> tuple[str, ...]:
    """The code's words for what ``text`` describes (empty: none of the table's
    concepts), each once, in the table's order, less words ``text`` already holds."""
    have = {w.lower() for w in re.findall(r"\w+", text)}
    out: dict[str, None] = {}
    for _, words in concept_matches(text):
        out.update((w, None) for w in words if w not in have)
    return tuple(out)
