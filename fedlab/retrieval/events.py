"""Event references → meetings: a question that names a meeting by what happened there.

Contract and design notes: docs/meeting-aware-retrieval.md#design-notes-fedlabretrievaleventspy.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from datetime import date

from fedlab.facts.records import Meeting, Timeline
from fedlab.facts.timeline import parse_number
from fedlab.retrieval.types import DateHint

PANDEMIC_YEAR = 2020  # "the pandemic": the first emergency move of this year or later
# meetings within about a year → scope "span": a year of meetings (eight, about six weeks apart)
# can run a little past 365 days from first decision date to last
SPAN_MAX_DAYS = 400

# -- regex pieces ----------------------------------------------------------------------------------

_YEAR = r"(?:19[5-9]\d|20[0-6]\d)"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun",
                                           "jul", "aug", "sep", "oct", "nov", "dec"))}
_NUM = r"(?:\d+(?:\s*-\s*|\s+)\d/\d|\d/\d|\d+(?:\.\d+)?)"
_ORD_WORDS = {"first": 1, "1st": 1, "initial": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
              "fourth": 4, "4th": 4, "fifth": 5, "5th": 5, "last": -1, "latest": -1, "final": -1,
              "most recent": -1, "most recently": -1, "finally": -1, "initially": 1,
              "next": 1, "following": 1, "subsequent": 1, "previous": -1, "preceding": -1, "prior": -1}
_RELATIVE_ORDS = {"next", "following", "subsequent", "previous", "preceding", "prior"}
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ORD = (r"(?:first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|last|latest|most\s+recent|final"
        r"|initial|next|previous|following|subsequent)")
_ADV = r"(?:first|last|most\s+recently|finally|initially)"
_CYC_DIR = (r"(?:tightening|firming|hiking|rate[- ]hiking|rate[- ]hike|hike|raising|rate[- ]increase"
            r"|easing|cutting|rate[- ]cutting|rate[- ]cut|cut|loosening)")
_RATE_SUBJ = (r"(?:the\s+(?:fed's\s+|committee's\s+|fomc's\s+)?(?:target\s+range(?:\s+for\s+the\s+federal"
              r"\s+funds\s+rate)?|range|(?:federal|fed)\s+funds\s+(?:rate|target(?:\s+range)?|range)"
              r"|policy\s+rate)|(?:interest\s+|policy\s+)?rates)")
_SUBJ = (rf"(?:(?:the\s+)?(?:committee|fomc|fed|federal\s+reserve|central\s+bank|policymakers|officials)"
         rf"|it|they|{_RATE_SUBJ})")
_AUX = r"(?:was|were|had|has|have|did|had\s+been|was\s+being)"
_OBJ = (r"(?:\s+(?:(?:interest\s+|policy\s+)?rates|(?:its\s+|the\s+)(?:target\s+)?range(?:\s+for\s+the"
        r"\s+federal\s+funds\s+rate)?|the\s+(?:federal|fed)\s+funds\s+(?:rate|target\s+range)|the\s+policy"
        r"\s+rate|(?:monetary\s+)?policy|it|them)\b)")
_RAISE_VERBS = {"raised", "hiked", "increased", "lifted", "tightened", "raise", "hike", "increase", "lift", "tighten"}
_CUT_VERBS = {"cut", "lowered", "reduced", "eased", "slashed", "dropped", "lower", "reduce", "ease", "slash", "drop"}
_SET_VERBS = {"brought", "took", "moved", "set", "pushed", "bring", "take", "move", "push"}
_HOLD_VERBS = {"kept", "maintained", "held", "left", "keep", "maintain", "hold", "leave"}
_VERB = r"(?:" + "|".join(sorted(_RAISE_VERBS | _CUT_VERBS | _SET_VERBS | _HOLD_VERBS, key=len, reverse=True)) + r")"


def _years(name: str) -> str:
    return rf"(?P<{name}>{_YEAR}(?:\s*[-/]\s*(?:{_YEAR}|\d\d)(?!\d))?)(?![\d%])"


def _month_year(name: str) -> str:
    return rf"(?P<{name}>{_MONTH}\s+{_YEAR})"


def _size(name: str) -> str:
    return (rf"(?P<{name}>(?:\d+(?:\.\d+)?|\d+-\d/\d|\d/\d|quarter|half|three-quarters?|full)[-\s]?"
            rf"(?:percentage[-\s]points?|basis[-\s]points?|bps?|pp|points?)"
            rf"|(?:a\s+)?(?:quarter|half)\s+(?:of\s+)?a\s+(?:percentage\s+)?point)")


def _range(name: str) -> str:
    return (rf"(?P<{name}lo>{_NUM})\s*(?:percent|per\s+cent|%)?\s*(?:to|-)\s*(?P<{name}hi>{_NUM})"
            rf"(?:\s*(?:percent|per\s+cent|%))?")


def _cycle(p: str) -> str:
    """A cycle phrase: "[current] [2022-23] tightening [cycle]", "hiking campaign", "2022-23 hikes"."""
    return (rf"(?:(?P<{p}mod>current|latest|most\s+recent|recent|ongoing|last|previous|prior|first)\s+)?"
            rf"(?:{_years(p + 'y')}\s+)?"
            rf"(?:(?P<{p}dir>{_CYC_DIR})\s+(?P<{p}word>cycle|campaign|phase|episode)"
            rf"|(?P<{p}dir2>tightening|easing|loosening|firming)"
            rf"(?!\s+(?:moves?|steps?|actions?|decisions?|bias|of|in|financial|credit|conditions|policy)\b)"
            rf"|(?:rate\s+)?(?P<{p}dir3>hikes|increases|raises|cuts|reductions)|(?P<{p}bare>cycle))\b")


def _target(name: str) -> str:
    """A range ("3 to 3-1/4 percent") or an extreme ("its 2023-24 peak", "the zero lower bound")."""
    return (rf"(?:{_range(name)}|(?:(?:its|the|their|a)\s+(?:{_years(name + 'y')}\s+)?"
            rf"(?P<{name}xw>peak|high|highest(?:\s+level)?|maximum|top|trough|low|lowest(?:\s+level)?|floor"
            rf"|bottom|minimum)(?:\s+(?:of|in|during|for)\s+(?:the\s+)?(?:{_cycle(name + 'c')}"
            rf"|{_years(name + 'y2')}))?)|(?P<{name}zero>(?:the\s+)?(?:zero|effective)\s+lower\s+bound|zero))")


def _qual(p: str) -> str:
    return (rf"(?:\s*,?\s+(?:in|of|during|for|within|from)\s+(?:(?:the|this|that|its)\s+)?(?:(?:calendar\s+)?year\s+)?"
            rf"(?:{_cycle(p + 'c')}|{_month_year(p + 'my')}|{_years(p + 'y')}))")


_LEAD = (r"(?:when|the\s+(?P<tord>first|second|third|last|final|most\s+recent)\s+time"
         r"|the\s+(?:fomc\s+)?(?:meeting|decision|statement)\s+(?:where|when|at\s+which|in\s+which|that|which))")
_DNAME = (r"(?P<dname>(?!(?:the|a|an|any|one|two|more|members?|participants?|governors?|presidents?"
          r"|policymakers|officials|committee|fed|fomc)\b)[a-z][a-z'-]+)")
_DDIR = (r"(?:\s+(?:in\s+favou?r\s+of|favou?ring|preferring|calling\s+for|for)\s+(?:a\s+|an\s+)?"
         r"(?:larger\s+|bigger\s+|deeper\s+|smaller\s+|steeper\s+)?(?P<ddir>cut|reduction|lower\w*|eas\w*"
         r"|hike|increase|rais\w*|tighten\w*|hold|no\s+change|unchanged\s+(?:policy|rates)|steady\s+rates))")

_RUNOFF = (r"(?:balance[- ]sheet\s+)?run-?off|quantitative\s+tightening|qt|balance[- ]sheet\s+(?:reduction"
           r"|shrinkage|normali[sz]ation|runoff)|(?:the\s+)?(?:reduction|decline|shrinking)\s+(?:in|of)\s+"
           r"(?:its\s+|the\s+(?:fed's\s+|committee's\s+)?)?(?:securities\s+|asset\s+)?(?:holdings|balance\s+sheet)"
           r"|shrinking\s+(?:the|its)\s+balance\s+sheet|reduc(?:ing|e)\s+(?:its|the)\s+(?:securities\s+)?holdings")
_PURCH = (r"(?:net\s+)?(?:large-scale\s+)?(?:asset|bond|securities|treasury(?:\s+and\s+mbs)?|mbs)\s+purchases"
          r"|quantitative\s+easing|qe|bond[- ]buying(?:\s+program)?|(?:asset\s+)?purchase\s+program")
_TAPER = r"taper(?:ing)?(?:\s+of\s+(?:(?:net\s+)?(?:asset\s+)?purchases|qe))?"
_BS_SUBJ = rf"(?:(?P<s_runoff>{_RUNOFF})|(?P<s_purch>{_PURCH})|(?P<s_taper>{_TAPER}))\b"
_PH_VERB = (r"(?:(?P<p_begin>began|begun|begin|begins|beginning|started|start|starts|starting|launched|launch"
            r"|commenced|commence|initiated|kicked\s+off)|(?P<p_slow>slowed|slow|slows|slowing|decelerated)"
            r"|(?P<p_end>ended|end|ends|ending|concluded|conclude|concludes|concluding|stopped|stop|stops"
            r"|stopping|halted|halt|finished|finish|completed|complete|wound\s+down|wrapped\s+up)"
            r"|(?P<p_acc>accelerated|accelerate|sped\s+up|speed\s+up|doubled|quickened))\b")
_PH_NOUN = (r"(?:(?P<p_begin>start|beginning|launch|onset|commencement|introduction)"
            r"|(?P<p_slow>slowdown|slowing|slow-down|deceleration)"
            r"|(?P<p_end>end|ending|conclusion|completion|cessation|halt)"
            r"|(?P<p_acc>acceleration|speed-up|speedup))\b")
_BS_ACTION = {
    ("runoff", "begin"): "runoff_begun", ("runoff", "slow"): "runoff_slowed", ("runoff", "end"): "runoff_ended",
    ("purch", "begin"): "purchases_begun", ("purch", "end"): "purchases_ended",
    ("taper", "begin"): "taper_begun", ("taper", "acc"): "taper_accelerated", ("taper", "slow"): "taper_slowed",
    ("taper", "end"): "purchases_ended",
}
_BS_LABEL = {
    "runoff_begun": "start of runoff", "runoff_slowed": "slowing of runoff", "runoff_ended": "end of runoff",
    "purchases_begun": "start of asset purchases", "purchases_ended": "end of asset purchases",
    "taper_begun": "start of the taper", "taper_accelerated": "acceleration of the taper",
    "taper_slowed": "slowing of the taper",
}

_NOUNS = (
    r"(?P<n_emergency>(?:emergency|intermeeting|inter-meeting)\s+(?:rate\s+)?(?:meetings?|cuts?|moves?|actions?"
    r"|decisions?|reductions?|hikes?))"
    r"|(?P<n_unscheduled>unscheduled\s+(?:fomc\s+)?meetings?)"
    r"|(?P<n_raise>(?:rate\s+)?(?:hikes?|raises?|increases?|rises?)|(?:tightening|firming)\s+(?:moves?|steps?"
    r"|actions?|decisions?))"
    r"|(?P<n_cut>(?:rate\s+)?(?:cuts?|reductions?|decreases?|lowerings?)|(?:easing|loosening)\s+(?:moves?"
    r"|steps?|actions?|decisions?))"
    r"|(?P<n_move>(?:rate|policy)\s+(?:moves?|changes?|adjustments?))"
    r"|(?P<n_liftoff>lift-?off)"
    r"|(?P<n_hold>(?:rate\s+)?(?:holds?|pauses?|skips?))"
    r"|(?P<n_meeting>(?:fomc\s+|policy\s+|committee\s+)?(?:meetings?|decisions?|statements?))"
)
_MODS = (rf"(?:(?:{_years('my')}|{_month_year('mmy')}|{_size('ms')}|rate|interest[- ]rate|policy|fomc"
         rf"|committee|scheduled|regular|consecutive|straight)\s+)")
_HEAD = (rf"\b(?:(?P<det>(?:the|its|their|this|that|a|an)\s+|(?P<poss>[a-z]+)'s\s+))?"
         rf"(?:(?P<ord>{_ORD})(?:\s+(?P<count>two|three|four|five|six))?\s+)?")

# relation words between a head and its anchor, and before an anchor with no head
_REL = (r"(?P<rel>before|after|since|following|preceding|prior\s+to|ahead\s+of|in\s+the\s+run-?up\s+to"
        r"|leading\s+up\s+to|(?:that|which)\s+(?:followed|preceded|came\s+(?:after|before)))")
_GAP_RE = re.compile(rf"^\s*,?\s*(?:(?:right|immediately|just|shortly|directly|soon)\s+)?{_REL}\s+(?:the\s+)?$", re.I)
_PRE_RE = re.compile(rf"(?:^|[\s,(])(?:(?:right|immediately|just|shortly|directly|soon)\s+)?{_REL}\s+(?:the\s+)?$",
                     re.I)
_TRAIL_RE = re.compile(rf"^\s*,?\s*(?:(?:right|immediately|just|shortly|directly|soon)\s+)?{_REL}\b", re.I)
# an event phrase followed by a qualifier the scanners did not take ("the first meeting of the new
# Chair", "the first cut of the year"): the words narrow the event in a way this module cannot read
_UNKNOWN_QUAL_RE = re.compile(r"^\s+(?:of|in|for|under|during|with|by|at|from|within)\s+(?!the\s+(?:minutes|statement|"
                              r"press|summary|fomc\s+(?:minutes|statement))\b)", re.I)
_DATE_TOKEN_RE = re.compile(rf"(?<![\d.,$])(?:{_YEAR})(?![\d%])|\b(?:this|last|next)\s+year\b", re.I)


# -- types -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventHint:
    """The meetings an event reference names, the date hint covering them, and how it was read."""

    hint: DateHint
    meetings: tuple[str, ...]  # decision dates, in order
    provenance: str  # the rule and the timeline facts used

    def describe(self) -> str:
        """One line for the agent's assess_query: ``DATE_FROM..DATE_TO SCOPE: provenance``
        (read back by :func:`described_hint`)."""
        return f"{self.hint.date_from}..{self.hint.date_to} {self.hint.scope}: {self.provenance}"


_DESCRIBED_RE = re.compile(r"^\s*(\d{4}-\d\d-\d\d)\.\.(\d{4}-\d\d-\d\d) (meeting|month|span|year|multi_year)\b")


def described_hint(text: str) -> DateHint | None:
    """The DateHint an :meth:`EventHint.describe` line states, or None."""
    m = _DESCRIBED_RE.match(text or "")
    return DateHint(m.group(1), m.group(2), m.group(3), "") if m else None


class _Unresolved(Exception):
    pass


@dataclass
class _Mention:
    start: int
    end: int
    kind: str  # raise cut move hold dissent emergency unscheduled meeting liftoff bs set held extreme_set
    #            cycle cycle_start cycle_end pandemic
    text: str
    ordinal: int | None = None  # 1-based; negative counts from the end
    count: int = 1
    plural: bool = False
    relative_ord: bool = False  # "next" / "previous": only meaningful against an anchor
    action: str | None = None  # balance-sheet action
    size_bp: int | None = None
    target: tuple[float, float] | None = None  # a range as written
    extreme: str | None = None  # "max" | "min"
    ext_window: tuple | None = None  # qualifier of the extreme ("2023-24 peak")
    direction: str | None = None  # raise | cut (verbs, cycles)
    dname: str | None = None
    ddir: str | None = None
    qual: tuple | None = None  # ("years", y1, y2) | ("month", y, m) | ("cycle", dir, y1, y2, mod)
    cycle_mod: str | None = None
    weak: bool = False  # generic ("the cut", "the June 2022 meeting"): only inside a relation
    anchor_only: bool = False  # "the pandemic": only as an anchor
    needs_head: bool = False  # "the peak": only as the anchor of a head mention


@dataclass
class _Res:
    meetings: tuple[Meeting, ...]
    desc: str
    point: bool = False  # an anchor that is a moment just before its meeting ("the pandemic")
    aftermath: bool = False  # "after X" with no head: X's meeting and the next
    since: bool = False  # "since X" with no head: every meeting from X's first on


@dataclass
class _Group:
    start: int
    end: int
    res: _Res | None
    error: str | None = None
    mentions: list[_Mention] = field(default_factory=list)


# -- reading the words -----------------------------------------------------------------------------


def _parse_years(s: str) -> tuple[int, int]:
    parts = re.split(r"\s*[-/]\s*", s.strip())
    y1 = int(parts[0])
    if len(parts) == 1:
        return y1, y1
    tail = parts[1]
    y2 = int(tail) if len(tail) == 4 else (y1 // 100) * 100 + int(tail)
    return (y1, y2) if y2 >= y1 else (y1, y1)


def _parse_num(s: str) -> float:
    s = re.sub(r"(\d)\s+(\d/\d)", r"\1-\2", s.strip())
    s = re.sub(r"\s*-\s*", "-", s)
    return parse_number(s)


def _parse_range(m: re.Match, name: str) -> tuple[float, float] | None:
    if not m.group(name + "lo"):
        return None
    lo, hi = _parse_num(m.group(name + "lo")), _parse_num(m.group(name + "hi"))
    if not (0 <= lo < hi <= 25 and hi - lo <= 1.0):
        return None
    return lo, hi


def _parse_size(s: str | None) -> int | None:
    if not s:
        return None
    s = s.lower()
    words = {"quarter": 25, "half": 50, "three-quarter": 75, "three-quarters": 75, "full": 100}
    for w, bp in sorted(words.items(), key=lambda kv: -len(kv[0])):
        if s.startswith(w) or s.startswith("a " + w):
            return bp
    num = re.match(r"[\d./-]+", s)
    value = _parse_num(num.group().rstrip("-")) if num else 0.0
    if re.search(r"basis|bp", s):
        return round(value)
    if re.search(r"percentage|pp", s):
        return round(value * 100)
    return round(value * 100) if value <= 2 else round(value)  # "half point", "50 point"


def _dir_of(word: str | None) -> str | None:
    if not word:
        return None
    w = word.lower()
    if re.search(r"tight|firm|hik|rais|increas|lift", w):
        return "raise"
    if re.search(r"eas|cut|loosen|reduc|lower", w):
        return "cut"
    return None


def _ordinal(word: str | None) -> int | None:
    return None if not word else _ORD_WORDS.get(re.sub(r"\s+", " ", word.lower()))


def _qual_of(m: re.Match, p: str) -> tuple | None:
    """The qualifier groups of ``_qual(p)`` (or a bare ``_cycle(p+'c')``) as a spec."""
    g = m.groupdict()
    if g.get(p + "my"):
        mon, year = g[p + "my"].rsplit(None, 1)
        return ("month", int(year), _MONTHS[mon.lower().rstrip(".")[:3]])
    if g.get(p + "y"):
        return ("years", *_parse_years(g[p + "y"]))
    return _cycle_spec(g, p + "c")


def _cycle_spec(g: dict, p: str) -> tuple | None:
    if not any(g.get(p + k) for k in ("dir", "dir2", "dir3", "bare")):
        return None
    word = g.get(p + "dir") or g.get(p + "dir2") or g.get(p + "dir3")
    years = _parse_years(g[p + "y"]) if g.get(p + "y") else (None, None)
    mod = g.get(p + "mod")
    return ("cycle", _dir_of(word), *years, re.sub(r"\s+", " ", mod.lower()) if mod else None)


# -- scanners: each turns one match into a mention (or None: not an event reference) -------------


def _m_held(m: re.Match) -> _Mention | None:
    target = _parse_range(m, "t")
    mention = _Mention(m.start(), m.end(), "held", m.group(), ordinal=_ordinal(m.group("adv")))
    if target is not None:
        mention.target = target
    elif not _set_extreme(mention, m, "t"):
        return None
    return mention


def _set_extreme(mention: _Mention, m: re.Match, name: str) -> bool:
    g = m.groupdict()
    word = g.get(name + "xw")
    if g.get(name + "zero"):
        mention.extreme = "min"
    elif word:
        mention.extreme = "max" if re.match(r"peak|high|max|top|terminal", word, re.I) else "min"
    else:
        return False
    if g.get(name + "y"):
        mention.ext_window = ("years", *_parse_years(g[name + "y"]))
    elif g.get(name + "y2"):
        mention.ext_window = ("years", *_parse_years(g[name + "y2"]))
    else:
        mention.ext_window = _cycle_spec(g, name + "c")
    return True


def _m_peaked(m: re.Match) -> _Mention:
    mention = _Mention(m.start(), m.end(), "extreme_set", m.group())
    mention.extreme = "max" if re.search(r"peak|high|top", m.group("pv"), re.I) else "min"
    mention.ext_window = ("years", *_parse_years(m.group("y"))) if m.group("y") else _cycle_spec(m.groupdict(), "c")
    return mention


def _m_peak_noun(m: re.Match) -> _Mention:
    mention = _Mention(m.start(), m.end(), "held", m.group())
    mention.extreme = "max" if re.match(r"peak|high|max|terminal", m.group("xw"), re.I) else "min"
    if m.group("y"):
        mention.ext_window = ("years", *_parse_years(m.group("y")))
    elif m.group("y2"):
        mention.ext_window = ("years", *_parse_years(m.group("y2")))
    else:
        mention.ext_window = _cycle_spec(m.groupdict(), "c")
    return mention


_NOT_DONE_RE = re.compile(
    r"\b(?:expects?|expected|expecting|plan(?:s|ned)?|intends?|intended|anticipates?|anticipated|would|will|might"
    r"|may|could|should|consider(?:s|ed|ing)?|discuss(?:es|ed|ing)?|debat(?:e|es|ed|ing)|prepared|ready|likely"
    r"|appropriate|whether|how|about|of|on|regarding)\s+(?:(?:soon|likely|be|to|it|the|committee|fed)\s+){0,3}$", re.I)


def _not_done(text: str, m: re.Match) -> bool:
    """A step talked about, planned or expected ("expects to begin reducing its holdings"), not taken."""
    return bool(_NOT_DONE_RE.search(text[max(0, m.start() - 60):m.start()]))


def _m_rate_verb(m: re.Match, text: str, lead: bool) -> _Mention | None:
    verb = m.group("verb").lower()
    if not lead and _not_done(text, m):
        return None
    g = m.groupdict()
    target = _parse_range(m, "t")
    has_target = target is not None or bool(g.get("txw") or g.get("tzero"))
    size = _parse_size(g.get("s"))
    qual = _qual_of(m, "q")
    ordinal = _ordinal(g.get("tord")) or _ordinal(g.get("adv")) or _ordinal(g.get("ford"))
    if verb in _HOLD_VERBS:
        if not has_target:
            return None
        mention = _Mention(m.start(), m.end(), "held", m.group(), qual=qual)
        if target is None:
            _set_extreme(mention, m, "t")
        else:
            mention.target = target
        mention.ordinal = ordinal
        return mention
    direction = "raise" if verb in _RAISE_VERBS else "cut" if verb in _CUT_VERBS else None
    if direction is None and not has_target:
        return None
    if not lead and not has_target:
        return None
    if not has_target and not (g.get("obj") or size):
        # "when the Fed first cut" ends there (or goes on to a date or a relation); not "raised concerns"
        rest = text[m.end():]
        if not re.match(r"\s*(?:$|[?.!,;:)]|(?:in|for|again|before|after|since|during|following|and|by)\b)",
                        rest, re.I):
            return None
    kind = "set" if has_target else (direction or "move")
    mention = _Mention(m.start(), m.end(), kind, m.group(), ordinal=ordinal, size_bp=size, qual=qual,
                       direction=direction)
    if has_target:
        if target is not None:
            mention.target = target
        else:
            _set_extreme(mention, m, "t")
            mention.kind = "extreme_set"
    # a verb with no ordinal names every such move: plural, but only if something narrows it
    mention.plural = ordinal is None
    if ordinal is None and not (qual or size or has_target):
        return None
    return mention


def _m_dissent_verb(m: re.Match) -> _Mention:
    who = (m.group("who") or "").strip().split()
    ordinal = _ordinal(m.group("tord")) or _ordinal(m.group("adv"))
    mention = _Mention(m.start(), m.end(), "dissent", m.group(), ordinal=ordinal, qual=_qual_of(m, "q"),
                       ddir=m.group("ddir"))
    if who and who[-1].lower() not in {"someone", "anyone", "members", "member", "participants", "governors",
                                       "presidents", "officials", "policymakers", "voters", "committee", "fomc"}:
        mention.dname = who[-1]
    mention.plural = ordinal is None
    if ordinal is None and not (mention.qual or mention.dname or mention.ddir):
        return None
    return mention


def _bs_action(m: re.Match) -> str | None:
    g = m.groupdict()
    subj = "runoff" if g.get("s_runoff") else "purch" if g.get("s_purch") else "taper"
    phase = next((p for p in ("begin", "slow", "end", "acc") if g.get("p_" + p)), None)
    if phase is None:
        return "taper_begun" if subj == "taper" else None
    return _BS_ACTION.get((subj, phase))


def _m_bs(m: re.Match, text: str) -> _Mention | None:
    action = _bs_action(m)
    if action is None:
        return None
    if _not_done(text, m) and not m.groupdict().get("ord"):
        return None  # "discussions of tapering began", "expects to begin reducing": not the step itself
    g = m.groupdict()
    ordinal = _ordinal(g.get("ord")) or _ordinal(g.get("adv"))
    return _Mention(m.start(), m.end(), "bs", m.group(), ordinal=ordinal, action=action, qual=_qual_of(m, "q"))


def _m_cycle_phase(m: re.Match, text: str) -> _Mention | None:
    if _not_done(text, m):
        return None
    direction = _dir_of(m.group("ger"))
    if direction is None:
        return None
    kind = "cycle_start" if re.match(r"beg|start", m.group("phase"), re.I) else "cycle_end"
    return _Mention(m.start(), m.end(), kind, m.group(), direction=direction, qual=_qual_of(m, "q"))


def _m_bare_peak(m: re.Match) -> _Mention:
    """"the peak" / "the trough" alone: the range's, but only as the anchor of a head ("the first
    cut after the peak"), never on its own ("inflation after the peak" may mean inflation's)."""
    mention = _Mention(m.start(), m.end(), "held", m.group(), needs_head=True)
    mention.extreme = "max" if m.group("xw").lower() == "peak" else "min"
    mention.ext_window = ("years", *_parse_years(m.group("y"))) if m.group("y") else None
    return mention


def _m_pandemic(m: re.Match) -> _Mention:
    return _Mention(m.start(), m.end(), "pandemic", m.group(), anchor_only=True)


# a clause restricting an ordinal meeting or statement to those that said something: "the last statement
# to include the paragraph on …", "the first meeting whose statement mentioned …"
_SAYING_CLAUSE = re.compile(
    r"\s+(?:to|that|which|whose\s+(?:statement|minutes))\s+(?:\w+\s+)?(?:include|mention|say|said|use|cite|refer"
    r"|contain|list|describe|note|feature|carr|keep|kept|drop|omit|reference|repeat|word|phras)\w*\b", re.I)


def _m_kind(m: re.Match, text: str, dissent: bool) -> _Mention | None:
    g = m.groupdict()
    ordinal = _ordinal(g.get("ord"))
    if dissent:
        kind, noun = "dissent", g["noun"]
    else:
        kind = next(k for k in ("emergency", "unscheduled", "raise", "cut", "move", "liftoff", "hold", "meeting")
                    if g.get("n_" + k))
        noun = g["n_" + kind]
    nl = noun.lower()
    size = _parse_size(g.get("ms") or g.get("ps"))
    target = _parse_range(m, "pr") if not dissent else None
    qual = _qual_of(m, "q")
    if not qual and g.get("my"):
        qual = ("years", *_parse_years(g["my"]))
    if not qual and g.get("mmy"):
        mon, year = g["mmy"].rsplit(None, 1)
        qual = ("month", int(year), _MONTHS[mon.lower().rstrip(".")[:3]])
    if kind in ("raise", "cut") and re.match(r"(?:increase|rise|reduction|decrease|lowering)", nl):
        in_rates = bool(g.get("pin"))
        if not ("rate" in nl or "rate" in (g.get("mods") or "").lower() or in_rates or size or target):
            return None  # "the increase in inflation"
    if kind == "meeting" and g.get("pdiss"):
        kind = "dissent"
    if kind == "meeting" and _SAYING_CLAUSE.match(text, m.end()):
        return None  # "the last statement to mention the war": the last of those that said it, not the last one
    mention = _Mention(m.start(), m.end(), kind, m.group(), ordinal=ordinal, size_bp=size, qual=qual)
    mention.relative_ord = bool(g.get("ord")) and g["ord"].lower() in _RELATIVE_ORDS
    if g.get("count"):
        mention.count = _COUNTS[g["count"].lower()]
    last_word = nl.split()[-1]
    mention.plural = last_word.endswith("s") and not last_word.endswith("ss")
    if target is not None:
        mention.target, mention.kind = target, "set"
        mention.direction = kind if kind in ("raise", "cut") else None
    if kind == "dissent":
        mention.dname = g.get("dname") or g.get("poss")
        mention.ddir = g.get("ddir")
    absolute_ord = bool(ordinal) and not mention.relative_ord
    # what makes a mention an event reference on its own: an ordinal, a size, a range, a dissenter,
    # a cycle, or a kind that is an event by itself; a bare year or month is the date parser's
    specific = absolute_ord or bool(size or target or mention.dname or mention.ddir)
    specific = specific or bool(qual and qual[0] == "cycle")
    specific = specific or kind in ("emergency", "liftoff", "unscheduled")
    if kind == "meeting" and not absolute_ord:
        specific = False  # "the June 2022 meeting" is a date, not an event
    mention.weak = not specific
    return mention


def _m_cycle(m: re.Match) -> _Mention | None:
    spec = _cycle_spec(m.groupdict(), "c")
    if spec is None:
        return None
    _, direction, y1, y2, mod = spec
    phase = m.group("cph")
    kind = "cycle" if not phase else ("cycle_start" if re.match(r"start|begin|onset", phase, re.I) else "cycle_end")
    mention = _Mention(m.start(), m.end(), kind, m.group(), direction=direction,
                       qual=("years", y1, y2) if y1 else None)
    mention.cycle_mod = mod
    strong = bool(y1 or mod or phase or m.group("cword"))
    if m.group("cdir3") and not y1:
        return None  # "the hikes": a plural kind, read by the kind scanner
    mention.weak = not strong
    if m.group("cbare") and not (y1 or mod):
        mention.weak = True
    return mention


def _scanners() -> list[tuple[re.Pattern, object]]:
    I = re.I
    held = re.compile(
        rf"\b(?:(?:while|whilst|when|as\s+long\s+as|with|during\s+the\s+(?:period|months|time)\s+(?:when|that"
        rf"|in\s+which))\s+{_RATE_SUBJ}\s+(?:(?:was|were|sat|stood|remained|stayed|held|rested|had\s+been"
        rf"|has\s+been)\s+)?|when\s+(?:was|were|did|had)\s+{_RATE_SUBJ}\s+)(?:(?P<adv>{_ADV})\s+)?"
        rf"(?:(?:been|sit|stand|remain|stay|rest)\s+)?"
        rf"(?:(?:held|kept|maintained|left|steady|unchanged|still|firmly)\s+)?(?:at|near|around|in)\s+"
        rf"{_target('t')}", I)
    peaked = re.compile(
        rf"\b{_RATE_SUBJ}\s+(?:(?:first|finally)\s+)?(?P<pv>peaked|topped\s+out|hit\s+(?:its|their|a)\s+peak"
        rf"|reached\s+(?:its|their|a|the)\s+(?:peak|high|highest\s+level)|bottomed(?:\s+out)?"
        rf"|(?:hit|reached)\s+(?:zero|the\s+(?:zero|effective)\s+lower\s+bound))"
        rf"(?:\s+(?:in|of|during)\s+(?:the\s+)?(?:{_cycle('c')}|{_years('y')}))?", I)
    peak_noun = re.compile(
        rf"\b(?:the|its|their)\s+(?:{_years('y')}\s+)?(?P<xw>peak|highest|maximum|terminal|lowest|minimum)\s+"
        rf"(?:level\s+(?:of|for)\s+(?:the\s+)?)?(?:policy\s+|target\s+|interest\s+|(?:federal|fed)\s+funds\s+)?"
        rf"(?:rate|range)(?:\s+(?:in|of|during)\s+(?:the\s+)?(?:{_cycle('c')}|{_years('y2')}))?"
        rf"|\bthe\s+(?:{_years('y3')}\s+)?(?P<xw2>peak|trough)\s+(?:of|in)\s+(?:the\s+)?(?:(?:target\s+)?range"
        rf"|(?:interest\s+|policy\s+)?rates|(?:federal|fed)\s+funds\s+rate|policy\s+rate|{_cycle('d')})", I)
    lead_verb = re.compile(
        rf"\b{_LEAD}\s+(?:{_AUX}\s+)?(?:{_SUBJ}\s+)?(?:{_AUX}\s+)?(?:(?P<adv>{_ADV})\s+)?(?:been\s+)?"
        rf"(?P<verb>{_VERB})\b(?P<obj>{_OBJ})?(?:\s+by\s+{_size('s')})?(?:\s+(?:to|at)\s+{_target('t')})?"
        rf"(?:\s+for\s+the\s+(?P<ford>first|second|third|last|final)\s+time)?{_qual('q')}?", I)
    set_verb = re.compile(
        rf"\b(?:{_SUBJ}\s+)?(?:{_AUX}\s+)?(?:(?P<adv>{_ADV})\s+)?(?P<verb>{_VERB})\b(?P<obj>{_OBJ})?"
        rf"(?:\s+by\s+{_size('s')})?\s+(?:to|at)\s+{_target('t')}{_qual('q')}?", I)
    dissent_verb = re.compile(
        rf"\b(?:when|the\s+(?P<tord>first|second|third|last|final|most\s+recent)\s+time|the\s+(?:fomc\s+)?"
        rf"(?:meeting|decision)\s+(?:where|when|at\s+which|in\s+which))\s+(?P<who>(?:[a-z.'-]+\s+){{0,4}}?)"
        rf"(?:(?P<adv>{_ADV})\s+)?dissented{_DDIR}?{_qual('q')}?", I)
    ordw = r"(?P<ord>first|second|third|last|latest|most\s+recent|final)"
    bs = [
        re.compile(rf"\b(?:the\s+)?{_BS_SUBJ}\s+(?:(?:was|were|had|has|have|got|being|had\s+been|has\s+been|did)\s+)?"
                   rf"(?:(?P<adv>{_ADV})\s+)?(?:to\s+)?{_PH_VERB}{_qual('q')}?", I),
        re.compile(rf"\b(?:(?P<adv>{_ADV})\s+)?{_PH_VERB}\s+(?:to\s+)?(?:the\s+pace\s+of\s+)?(?:the\s+|its\s+)?"
                   rf"{_BS_SUBJ}{_qual('q')}?", I),
        re.compile(rf"\b(?:the\s+)?(?:{ordw}\s+)?{_PH_NOUN}\s+(?:of|in|to)\s+(?:the\s+)?(?:pace\s+of\s+)?"
                   rf"(?:the\s+|its\s+)?{_BS_SUBJ}{_qual('q')}?", I),
        re.compile(rf"\b(?:the\s+)?(?:{ordw}\s+)?{_BS_SUBJ}\s+{_PH_NOUN}{_qual('q')}?", I),
        re.compile(rf"\bthe\s+(?:{ordw}\s+)?taper\b(?!\s+tantrum)(?:\s+of\s+(?:(?:net\s+)?(?:asset\s+)?purchases))?"
                   rf"{_qual('q')}?(?P<s_taper>)", I),
    ]
    cycle_phase = re.compile(
        rf"\b(?:{_SUBJ}\s+)?(?:{_AUX}\s+)?(?:first\s+)?(?P<phase>began|begun|begin|started|start|starting"
        rf"|stopped|stop|ended|end|finished|finish|concluded|halted)\s+(?:to\s+)?(?P<ger>rais\w*|hik\w*|lift\w*"
        rf"|tighten\w*|cut\w*|lower\w*|eas\w*)\b(?:\s+(?:interest\s+|policy\s+)?rates|\s+(?:monetary\s+)?policy"
        rf"|\s+the\s+(?:target\s+)?range)?{_qual('q')}?", I)
    pandemic = re.compile(
        r"\b(?:the\s+)?(?:(?:onset|start|beginning|outbreak|arrival)\s+of\s+(?:the\s+)?)?(?:covid(?:-?19)?"
        r"(?:\s+pandemic|\s+crisis|\s+outbreak|\s+shock)?|coronavirus(?:\s+pandemic|\s+outbreak)?|pandemic)\b"
        r"(?!-)(?:\s+(?:began|started|hit|struck|broke\s+out|arrived|emerged|took\s+hold))?", I)
    dissent_np = re.compile(
        rf"{_HEAD}(?:{_MODS}{{0,3}})(?P<noun>dissents?|dissenting\s+votes?|dissenters?)\b{_DDIR}?"
        rf"(?:\s+(?:by|from)\s+(?:governor\s+|president\s+|vice\s+chair\s+)?{_DNAME})?{_qual('q')}?", I)
    kind_np_text = (
        rf"{_HEAD}(?P<mods>{_MODS}{{0,3}})(?:{_NOUNS})\b"
        rf"(?P<pin>\s+in\s+(?:the\s+)?(?:target\s+range|(?:interest\s+)?rates?|(?:federal|fed)\s+funds\s+rate"
        rf"|policy\s+rate))?(?:\s+(?:of|by)\s+{_size('ps')})?(?:\s+(?:to|at)\s+{_range('pr')})?"
        rf"(?:\s+with\s+(?:a\s+|any\s+|one\s+or\s+more\s+|multiple\s+|several\s+|two\s+|three\s+)?"
        rf"(?P<pdiss>dissents?|dissenting\s+votes?))@PDISS@{_qual('q')}?")
    with_dissent = re.compile(kind_np_text.replace("@PDISS@", ""), I)  # "the last meeting with a dissent"
    kind_np = re.compile(kind_np_text.replace("@PDISS@", "?"), I)
    cycle_np = re.compile(
        rf"\b(?:the\s+)?(?:(?P<cph>start|beginning|onset|end|conclusion|close)\s+of\s+(?:the\s+)?)?"
        rf"(?:(?P<cmod>current|latest|most\s+recent|recent|ongoing|last|previous|prior|first)\s+)?"
        rf"(?:{_years('cy')}\s+)?(?:(?P<cdir>{_CYC_DIR})\s+(?P<cword>cycle|campaign|phase|episode)"
        rf"|(?P<cdir2>tightening|easing|loosening|firming)"
        rf"(?!\s+(?:moves?|steps?|actions?|decisions?|bias|of|in|financial|credit|conditions|policy)\b)"
        rf"|(?:rate\s+)?(?P<cdir3>hikes|increases|raises|cuts|reductions)|(?P<cbare>cycle))\b", I)
    bare_peak = re.compile(rf"\bthe\s+(?:{_years('y')}\s+)?(?P<xw>peak|trough)\b(?!\s+(?:of|in|for)\b|-)", I)
    return [
        (held, lambda m, t: _m_held(m)),
        (peaked, lambda m, t: _m_peaked(m)),
        (peak_noun, lambda m, t: _m_peak_noun(_alias(m))),
        (lead_verb, lambda m, t: _m_rate_verb(m, t, lead=True)),
        (set_verb, lambda m, t: _m_rate_verb(m, t, lead=False)),
        (dissent_verb, lambda m, t: _m_dissent_verb(m)),
        *[(p, _m_bs) for p in bs],
        (cycle_phase, _m_cycle_phase),
        (pandemic, lambda m, t: _m_pandemic(m)),
        (with_dissent, lambda m, t: _m_kind(m, t, dissent=False)),
        (dissent_np, lambda m, t: _m_kind(m, t, dissent=True)),
        (kind_np, lambda m, t: _m_kind(m, t, dissent=False)),
        (bare_peak, lambda m, t: _m_bare_peak(m)),
        (cycle_np, lambda m, t: _m_cycle(m)),
    ]


class _Alias:
    """The second alternative of the peak-noun pattern, seen through the first one's group names."""

    def __init__(self, m: re.Match):
        self.m = m

    def group(self, name=0):
        if name == 0:
            return self.m.group()
        g = self.m.groupdict()
        alt = {"xw": "xw2", "y": "y3"}.get(name)
        return g.get(name) or (g.get(alt) if alt else None)

    def groupdict(self):
        g = dict(self.m.groupdict())
        for k in ("dmod", "dy", "ddir", "ddir2", "ddir3", "dbare", "dword"):
            if g.get(k):
                g["c" + k[1:]] = g[k]
        return g

    def start(self, *a):
        return self.m.start(*a)

    def end(self, *a):
        return self.m.end(*a)


def _alias(m: re.Match):
    return _Alias(m) if m.group("xw2") else m


_SCANNERS = None


def _mentions(question: str) -> list[_Mention]:
    """The event phrases of ``question``, in order (fresh copies: callers adjust them). The scan
    is remembered per question: every config of a sweep resolves the same questions."""
    return [replace(m) for m in _scanned(question)]


@functools.lru_cache(maxsize=4096)
def _scanned(question: str) -> tuple[_Mention, ...]:
    global _SCANNERS
    if _SCANNERS is None:
        _SCANNERS = _scanners()
    text = re.sub(r"[‐‑‒–—−]", "-", question).replace("’", "'")
    masked = text
    found: list[_Mention] = []
    for pattern, make in _SCANNERS:
        for m in list(pattern.finditer(masked)):
            if not m.group().strip():
                continue
            mention = make(m, text)
            if mention is None:
                continue
            found.append(mention)
            masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    # trim a leading/trailing space the optional pieces may have left
    for x in found:
        while x.start < x.end and text[x.start].isspace():
            x.start += 1
        while x.end > x.start and text[x.end - 1].isspace():
            x.end -= 1
    return tuple(sorted(found, key=lambda x: x.start))


# -- the timeline side -----------------------------------------------------------------------------


def _policy_meeting(m: Meeting) -> bool:
    """A meeting that decided policy or was a scheduled meeting; not a notation vote."""
    return (m.scheduled or m.decision is not None) and not m.notation_vote


def _emergency(m: Meeting) -> bool:
    return (not m.scheduled and not m.notation_vote and m.decision is not None
            and m.decision.direction in ("raise", "cut"))


def _cycles(tl: Timeline) -> list[tuple[str, list[Meeting]]]:
    """Maximal runs of same-direction moves (holds in between allowed): (direction, moves)."""
    out: list[tuple[str, list[Meeting]]] = []
    for m in tl.decisions():
        d = m.decision.direction
        if d == "hold":
            continue
        if out and out[-1][0] == d:
            out[-1][1].append(m)
        else:
            out.append((d, [m]))
    return out


def _between(tl: Timeline, first: str, last: str) -> tuple[Meeting, ...]:
    return tuple(m for m in tl if first <= m.date <= last)


def _dir_word(direction: str | None) -> str:
    return {"raise": "tightening", "cut": "easing"}.get(direction, "policy")


def _cycle_label(direction: str, moves: list[Meeting]) -> str:
    return f"{_dir_word(direction)} cycle {moves[0].date}–{moves[-1].date}"


def _pick_cycle(tl: Timeline, direction: str | None, y1: int | None, y2: int | None, mod: str | None,
                ordinal: int | None = None) -> list[tuple[str, list[Meeting]]]:
    cycles = [c for c in _cycles(tl) if direction is None or c[0] == direction]
    if y1 is not None:
        lo, hi = f"{y1}-01-01", f"{y2}-12-31"
        scored = [(sum(lo <= m.date <= hi for m in c[1]), c) for c in cycles]
        best = max((s for s, _ in scored), default=0)
        cycles = [c for s, c in scored if s == best and s > 0]
    if mod in ("current", "latest", "most recent", "recent", "ongoing", "last"):
        ordinal = -1
    elif mod == "first":
        ordinal = 1
    elif mod in ("previous", "prior"):
        ordinal = -2
    if ordinal is not None:
        idx = ordinal - 1 if ordinal > 0 else ordinal
        return [cycles[idx]] if -len(cycles) <= idx < len(cycles) else []
    return cycles


def _window(spec: tuple | None, tl: Timeline, direction: str | None) -> tuple[str, str, str] | None:
    """(date_from, date_to, words) of a qualifier."""
    if spec is None:
        return None
    if spec[0] == "years":
        y1, y2 = spec[1], spec[2]
        return f"{y1}-01-01", f"{y2}-12-31", f"in {y1}" if y1 == y2 else f"in {y1}–{y2}"
    if spec[0] == "month":
        y, mo = spec[1], spec[2]
        return f"{y}-{mo:02d}-01", f"{y}-{mo:02d}-31", f"in {y}-{mo:02d}"
    _, cdir, y1, y2, mod = spec
    cycles = _pick_cycle(tl, cdir or direction, y1, y2, mod)
    if len(cycles) != 1:
        raise _Unresolved(f"{'no' if not cycles else 'more than one'} {_dir_word(cdir or direction)} cycle "
                          f"matches")
    d, moves = cycles[0]
    return moves[0].date, moves[-1].date, f"of the {_cycle_label(d, moves)}"


def _range_runs(tl: Timeline) -> list[tuple[tuple[float, float], list[Meeting]]]:
    """Consecutive meetings by the range in force (the last decision's range after)."""
    runs: list[tuple[tuple[float, float], list[Meeting]]] = []
    current = None
    for m in tl:
        if m.decision is not None:
            rng = (m.decision.after.low, m.decision.after.high)
            if rng != current:
                runs.append((rng, []))
                current = rng
        if runs:
            runs[-1][1].append(m)
    return runs


def _fmt(rng: tuple[float, float]) -> str:
    return f"{rng[0]:.2f}–{rng[1]:.2f}"


def _extreme_runs(tl: Timeline, extreme: str, spec: tuple | None) -> tuple[list, str]:
    window = _window(spec, tl, "raise" if extreme == "max" else "cut")
    runs = _range_runs(tl)
    inside = [(r, ms) for r, ms in runs
              if window is None or any(window[0] <= m.date <= window[1] for m in ms if m.decision)]
    if not inside:
        raise _Unresolved("no range in force in that period")
    key = (lambda r: (r[0][1], r[0][0])) if extreme == "max" else (lambda r: (-r[0][1], -r[0][0]))
    best = max(inside, key=key)[0]
    chosen = [(r, ms) for r, ms in inside if r == best]
    where = f" {window[2]}" if window else ""
    word = "peak" if extreme == "max" else "low"
    return chosen, f"{word} range {_fmt(best)}{where}"


def _items(x: _Mention, tl: Timeline) -> tuple[list[tuple[Meeting, ...]], str]:
    """The candidate events a mention names, in date order (each a tuple of meetings), and a label."""
    kind = x.kind
    if kind == "pandemic":
        first = next((m for m in tl if _emergency(m) and int(m.date[:4]) >= PANDEMIC_YEAR), None)
        if first is None:
            raise _Unresolved("no emergency move in the timeline")
        return [(first,)], f"pandemic (first emergency move from {PANDEMIC_YEAR}: unscheduled, range changed)"
    if kind in ("cycle", "cycle_start", "cycle_end", "liftoff"):
        direction = "raise" if kind == "liftoff" else x.direction
        y1, y2 = (x.qual[1], x.qual[2]) if x.qual and x.qual[0] == "years" else (None, None)
        cycles = _pick_cycle(tl, direction, y1, y2, x.cycle_mod)
        if kind == "cycle":
            items = [_between(tl, ms[0].date, ms[-1].date) for _, ms in cycles]
            label = _cycle_label(*cycles[0]) if len(cycles) == 1 else f"{_dir_word(direction)} cycle"
            return items, label
        elif kind in ("cycle_start", "liftoff"):
            items = [(ms[0],) for _, ms in cycles]
            label = "liftoff" if kind == "liftoff" else f"start of the {_dir_word(direction)} cycle"
        else:
            items = [(ms[-1],) for _, ms in cycles]
            label = f"end of the {_dir_word(direction)} cycle"
        if len(cycles) == 1:
            label += f" ({_cycle_label(*cycles[0])})"
        if x.qual and x.qual[0] == "years" and kind != "cycle":
            label += f" in {x.qual[1]}" + (f"–{x.qual[2]}" if x.qual[2] != x.qual[1] else "")
        return items, label
    if kind == "held":
        window = _window(x.qual, tl, None)
        if x.target is not None:
            runs = [(r, ms) for r, ms in _range_runs(tl) if r == x.target]
            label = f"range held at {_fmt(x.target)}"
        else:
            runs, label = _extreme_runs(tl, x.extreme, x.ext_window)
            label = f"range held at its {label}"
        if window:
            runs = [(r, ms) for r, ms in runs if any(window[0] <= m.date <= window[1] for m in ms)]
            label += f" {window[2]}"
        if len(runs) > 1 and x.ordinal is None:
            long = [(r, ms) for r, ms in runs if sum(1 for m in ms if m.decision) >= 2]
            if len(long) == 1:
                others = ", ".join(ms[0].date for r, ms in runs if ms is not long[0][1])
                label += f" (the run of more than one meeting; also set on {others})"
                runs = long
        return [tuple(ms) for _, ms in runs], label
    if kind == "extreme_set":
        runs, label = _extreme_runs(tl, x.extreme, x.ext_window)
        items = [(ms[0],) for _, ms in runs
                 if ms[0].decision is not None and ms[0].decision.direction in ("raise", "cut")
                 and (x.direction is None or ms[0].decision.direction == x.direction)]
        return items, f"meeting that set the {label}"

    window = _window(x.qual, tl, x.direction or (kind if kind in ("raise", "cut") else None))
    preds = []
    if kind == "set":
        preds.append(lambda m: m.decision is not None and (m.decision.after.low, m.decision.after.high) == x.target
                     and m.decision.direction in ("raise", "cut")
                     and (x.direction is None or m.decision.direction == x.direction))
        verb = {"raise": "raised", "cut": "lowered"}.get(x.direction, "moved")
        label = f"meeting that {verb} the range to {_fmt(x.target)}"
    elif kind in ("raise", "cut"):
        preds.append(lambda m: m.decision is not None and m.decision.direction == kind)
        label = kind
    elif kind == "move":
        preds.append(lambda m: m.decision is not None and m.decision.direction in ("raise", "cut"))
        label = "rate move"
    elif kind == "hold":
        preds.append(lambda m: m.decision is not None and m.decision.direction == "hold" and not m.notation_vote)
        label = "hold"
    elif kind == "dissent":
        preds.append(lambda m: m.decision is not None and bool(m.decision.dissents))
        label = "dissent"
        if x.dname:
            name = x.dname.lower()
            known = {d.name.split()[-1].lower() for m in tl.decisions() for d in m.decision.dissents}
            if name not in known:
                raise _Unresolved(f"no dissenter named {x.dname!r}")
            preds.append(lambda m: any(d.name.split()[-1].lower() == name for d in m.decision.dissents))
            label += f" by {x.dname.title()}"
        if x.ddir:
            want = _dir_of(x.ddir) or "hold"
            preds.append(lambda m: any(d.preferred_direction == want for d in m.decision.dissents))
            label += f" preferring a {want}"
    elif kind == "emergency":
        preds.append(_emergency)
        label = "emergency move (unscheduled meeting, range changed)"
    elif kind == "unscheduled":
        preds.append(lambda m: not m.scheduled and not m.notation_vote)
        label = "unscheduled meeting"
    elif kind == "meeting":
        preds.append(_policy_meeting)
        label = "meeting"
    elif kind == "bs":
        preds.append(lambda m: m.decision is not None and any(a.action == x.action for a in m.decision.balance_sheet))
        label = _BS_LABEL.get(x.action, x.action)
    else:  # pragma: no cover
        raise _Unresolved(f"unknown kind {kind}")
    if x.size_bp is not None:
        preds.append(lambda m: m.decision is not None and m.decision.size_bp == x.size_bp)
        label = f"{x.size_bp} bp {label}"
    if window:
        preds.append(lambda m: window[0] <= m.date <= window[1])
        label += f" {window[2]}"
    return [(m,) for m in tl if all(p(m) for p in preds)], label


_ORD_NAMES = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last", -2: "second-to-last"}


def _pick(items: list, ordinal: int | None, count: int, plural: bool, what: str) -> tuple[list, str]:
    if not items:
        raise _Unresolved(f"no {what}")
    if ordinal is None:
        if plural or len(items) == 1:
            return items, ("every " if len(items) > 1 else "the ") + what
        raise _Unresolved(f"{len(items)} candidates for {what}")
    if ordinal > 0:
        if len(items) < ordinal:
            raise _Unresolved(f"fewer than {ordinal} {what}")
        chosen = items[ordinal - 1:ordinal - 1 + count]
    else:
        if len(items) < -ordinal:
            raise _Unresolved(f"fewer than {-ordinal} {what}")
        chosen = items[-count:] if ordinal == -1 else [items[ordinal]]
    word = _ORD_NAMES.get(ordinal, f"#{ordinal}")
    if count > 1:
        word += f" {count}"
    return chosen, f"{word} {what}"


def _dates(meetings) -> str:
    ms = sorted({m.date for m in meetings})
    return ms[0] if len(ms) == 1 else f"{ms[0]}..{ms[-1]} ({len(ms)} meetings)"


def _flat(items) -> tuple[Meeting, ...]:
    seen: dict[str, Meeting] = {}
    for it in items:
        for m in it:
            seen.setdefault(m.date, m)
    return tuple(seen[d] for d in sorted(seen))


def _resolve_one(x: _Mention, tl: Timeline) -> _Res:
    if x.relative_ord:
        raise _Unresolved("'next'/'previous' with nothing to count from")
    items, label = _items(x, tl)
    chosen, words = _pick(items, x.ordinal, x.count, x.plural, label)
    meetings = _flat(chosen)
    return _Res(meetings, f"{words} → {_dates(meetings)}", point=x.kind == "pandemic")


def _rel_kind(rel: str) -> str:
    rel = re.sub(r"\s+", " ", rel.lower())
    if rel in ("before", "preceding", "prior to", "ahead of", "in the run-up to", "in the run up to",
               "leading up to") or rel.endswith("preceded") or rel.endswith("before"):
        return "before"
    return "since" if rel == "since" else "after"


def _relate(x: _Mention, rel: str, anchor: _Res, tl: Timeline) -> _Res:
    items, label = _items(x, tl)
    first, last = anchor.meetings[0].date, anchor.meetings[-1].date
    several = len(anchor.meetings) > 1
    if rel == "before":
        items = [it for it in items if it[-1].date < first]
        where, default = f"before {first}" + (" (first meeting of" if several else " ("), -1
    elif anchor.point:
        items = [it for it in items if it[0].date >= first]
        where, default = f"from {first} (", 1
    else:
        items = [it for it in items if it[0].date > last]
        where, default = f"after {last}" + (" (last meeting of" if several else " ("), 1
    ordinal = x.ordinal if x.ordinal is not None else (None if x.plural else default)
    chosen, words = _pick(items, ordinal, x.count, x.plural, label)
    meetings = _flat(chosen)
    return _Res(meetings, f"{words} {where}{' ' if several else ''}{anchor.desc}) → {_dates(meetings)}")


def _open_span(rel: str, anchor: _Res, tl: Timeline) -> _Res:
    first, last = anchor.meetings[0].date, anchor.meetings[-1].date
    if rel == "before":
        ms, where = [m for m in tl if m.date < first], f"meetings before {first}"
    elif rel == "since" or anchor.point:
        ms, where = [m for m in tl if m.date >= first], f"meetings since {first}"
    else:
        # "after X" with nothing counted: X's aftermath, the state X left ("the range after the
        # October 2019 meeting" is what that meeting set) — X's last meeting and the next one
        later = [m for m in tl if m.date > last and _policy_meeting(m)][:1]
        ms, where = [m for m in tl if m.date == last] + later, f"the aftermath of {last}"
    if not ms:
        raise _Unresolved(f"no {where}")
    return _Res(tuple(ms), f"{where} ({anchor.desc}) → {_dates(ms)}", aftermath=rel not in ("before", "since")
                and not anchor.point, since=rel == "since" or anchor.point)


def _groups(text: str, ms: list[_Mention], tl: Timeline, locate=None) -> list[_Group]:
    groups: list[_Group] = []
    i, prev_end = 0, 0
    while i < len(ms):
        j = i
        rels: list[str] = []
        while j + 1 < len(ms):
            g = _GAP_RE.match(text[ms[j].end:ms[j + 1].start])
            if not g or ms[j].anchor_only:
                break
            rels.append(_rel_kind(g.group("rel")))
            j += 1
        chain = ms[i:j + 1]
        pre = _PRE_RE.search(text[prev_end:ms[i].start])
        start = prev_end + pre.start("rel") if pre else ms[i].start
        group = _Group(start, ms[j].end, None, mentions=chain)
        trail = _TRAIL_RE.match(text[ms[j].end:])
        # "the first meeting after <something the timeline does not know>": located by meeting
        # retrieval, when nothing the scanners read lies inside the anchor's clause and the head is
        # not dated already ("the September 2019 meeting after …")
        anchor = (ms[j].end + trail.end(), _clause_end(text, ms[j].end + trail.end())) if trail else None
        located = (anchor is not None and locate is not None and not pre and chain[-1].qual is None
                   and (j + 1 == len(ms) or ms[j + 1].start >= anchor[1]))
        alone = chain[0] if len(chain) == 1 else None
        if alone is not None and not located and (
                alone.needs_head or (not pre and (alone.weak or alone.anchor_only))):
            i, prev_end = j + 1, ms[j].end
            continue  # a generic mention on its own ("the statement", "the pandemic") is no event reference
        try:
            if _UNKNOWN_QUAL_RE.match(text[ms[j].end:]) or any(
                    _UNKNOWN_QUAL_RE.match(text[x.end:]) for x in chain[:-1]):
                raise _Unresolved("a qualifier that is not understood")
            if located:
                res, group.end = _locate_anchor(text, *anchor, locate, tl), anchor[1]
                chain_rels = rels + [_rel_kind(trail.group("rel"))]
                for k in range(len(chain) - 1, -1, -1):
                    res = _relate(chain[k], chain_rels[k], res, tl)
            else:
                if trail:
                    raise _Unresolved(f"the event {text[ms[j].end:].split(None, 1)[0]} which is not a known event")
                res = _resolve_one(chain[-1], tl)
                for k in range(len(chain) - 2, -1, -1):
                    res = _relate(chain[k], rels[k], res, tl)
                if pre:
                    res = _open_span(_rel_kind(pre.group("rel")), res, tl)
            group.res = res
        except _Unresolved as e:
            group.error = str(e)
        groups.append(group)
        i, prev_end = j + 1, ms[j].end
    return groups


LOCATE_PASSAGES = 5  # meeting retrieval: the earliest meeting among this many best passages
_CLAUSE_END_RE = re.compile(r"[?.!;:]|,\s|\s+(?:and|but)\s+(?:what|how|why|who|which|when|did|does|was|were)\b", re.I)
_CONTENT_RE = re.compile(r"[a-z][a-z'-]{2,}|\d{4}", re.I)


def _clause_end(text: str, pos: int) -> int:
    end = _CLAUSE_END_RE.search(text, pos)
    return end.start() if end else len(text)


def _locate_anchor(text: str, pos: int, stop: int, locate, tl: Timeline) -> _Res:
    """An anchor event the timeline has no fact for ("Silicon Valley Bank failed", "Russia invaded
    Ukraine"), located by meeting retrieval: the phrase up to the end of its clause is searched
    over the corpus and the earliest meeting among the best passages is taken — news is first
    discussed at the first meeting after it happened and only referred back to later. The anchor
    is a point just before that meeting ("the first meeting after X" is that meeting)."""
    phrase = re.sub(r"^\s*(?:the|a|an)\s+", "", text[pos:stop]).strip()
    if len(_CONTENT_RE.findall(phrase)) < 2:
        raise _Unresolved("an event too short to search for")
    found = [d for d in locate(phrase) if d]
    if not found:
        raise _Unresolved(f"nothing in the corpus about {phrase!r}")
    first = min(found)
    meeting = next((m for m in tl if m.date >= first), None)
    if meeting is None:
        raise _Unresolved(f"no meeting on or after {first}")
    desc = f"{phrase!r} first discussed at {meeting.date} (earliest meeting of the {len(found)} best passages)"
    return _Res((meeting,), desc, point=True)


_AND_RE = re.compile(r"^\s*(?:and|to|through|until|till)\s+(?:the\s+)?$", re.I)
_BETWEEN_RE = re.compile(r"\b(?:between|from)\s+(?:the\s+)?$", re.I)


def _between_groups(text: str, groups: list[_Group], tl: Timeline) -> list[_Group]:
    """"between A and B", "from A to B": every meeting from A's first to B's last."""
    out: list[_Group] = []
    k = 0
    while k < len(groups):
        a = groups[k]
        b = groups[k + 1] if k + 1 < len(groups) else None
        if b is not None and _AND_RE.match(text[a.end:b.start]) and _BETWEEN_RE.search(text[:a.start]):
            first = min(a.res.meetings[0].date, b.res.meetings[0].date)
            last = max(a.res.meetings[-1].date, b.res.meetings[-1].date)
            ms = _between(tl, first, last)
            desc = f"meetings from {first} to {last} ({a.res.desc}; {b.res.desc}) → {_dates(ms)}"
            out.append(_Group(a.start, b.end, _Res(ms, desc), mentions=a.mentions + b.mentions))
            k += 2
            continue
        out.append(a)
        k += 1
    return out


def _scope(meetings: tuple[Meeting, ...]) -> str:
    if len(meetings) == 1:
        return "meeting"
    days = (date.fromisoformat(meetings[-1].date) - date.fromisoformat(meetings[0].date)).days
    return "span" if days <= SPAN_MAX_DAYS else "multi_year"


def _at_the_meeting_named(groups: list[_Group], tl: Timeline) -> list[_Group]:
    """``groups`` less each singular event with many candidates ("the quarter-point hike") beside
    references that name one meeting at which such an event happened ("at the meeting right after
    the Silicon Valley Bank collapse, what alternatives to the quarter-point hike …"): it is the
    one at that meeting, not a second reference."""
    named = _flat(g.res.meetings for g in groups if g.res is not None)
    if len(named) != 1:
        return groups
    kept = []
    for g in groups:
        x = g.mentions[0] if g.res is None and len(g.mentions) == 1 else None
        if x is not None and x.ordinal is None and not x.plural and not x.relative_ord:
            try:
                candidates = {m.date for m in _flat(_items(x, tl)[0])}
            except _Unresolved:
                candidates = set()
            if len(candidates) > 1 and named[0].date in candidates:
                continue
        kept.append(g)
    return kept


# -- hold runs --------------------------------------------------------------------------------------

# holding the range: a verb with the range as its object ("kept rates", "hold the range"), or a verb
# or adjective of staying put ("sat at", "remained", "unchanged", "on hold") — never "hold" alone,
# which also holds meetings ("how many meetings did the FOMC hold in 2020?")
_HOLDING = (rf"(?:(?:hold|holds|held|holding|keep|keeps|kept|keeping|leave|leaves|left|leaving|maintain|maintains"
            rf"|maintained|maintaining)\s+(?:{_RATE_SUBJ}|its\s+(?:target\s+)?range|policy|it|them)\b"
            # the Committee or the range staying put: its subject says whose ("how long did inflation
            # remain elevated" is not the range's)
            rf"|{_SUBJ}\s+(?:(?:was|were|had|has|have|been|be|being|did|do|does)\s+){{0,2}}(?:(?:held|kept|maintained"
            rf"|left)\s+(?:at|near|around|steady|unchanged|there|constant)\b|(?:sit|sits|sat|sitting|stay|stays|stayed"
            rf"|staying|remain|remains|remained|remaining|stand|stands|stood|rest|rested|pause|paused|pausing|park"
            rf"|parked)\b|unchanged\b|steady\b|on\s+(?:hold|pause)\b))")
_HOW_LONG = (r"(?:how\s+many\s+(?:more\s+|further\s+)?(?:consecutive\s+|straight\s+|successive\s+)?"
             r"(?:(?:scheduled|policy|fomc|committee)\s+)?meetings|how\s+long"
             r"|number\s+of\s+(?:consecutive\s+)?meetings)")
# or, with no verb, the range itself ("how many mtgs at 5.25-5.5% after the July 2023 hike")
_HOLD_RUN_ASK = re.compile(rf"\b{_HOW_LONG}\b[^?.;]*?(?:\b{_HOLDING}|\b(?:at|near)\s+{_range('a')})"
                           rf"|\b{_HOLDING}[^?.;]*?\bfor\s+{_HOW_LONG}\b", re.I)
_NAMED_RANGE = re.compile(rf"(?<![\d/.-]){_range('t')}", re.I)
_AT_EXTREME = re.compile(rf"\b(?:at|near|around|in)\s+{_target('t')}", re.I)
_ENDS_RUN = re.compile(r"^(?:before|until|till|prior\s+to|ahead\s+of|preceding)\b", re.I)


# what the documents said about holding, not how long it lasted: guidance ("how long rates would
# stay near zero"), a judgment ("how long the stance would stay appropriate")
_SAID_NOT_DONE = re.compile(r"\b(?:would|will|could|should|might|expect\w*|anticipat\w*|intend\w*|plan\w*|likely"
                            r"|guidance|appropriate|language|wording|say|says|said|describ\w*|characteri\w*|signal\w*"
                            r"|communicat\w*|indicat\w*)\b", re.I)


def asks_hold_run(question: str) -> bool:
    """Whether ``question`` asks how long the target range was held (module docstring: hold runs)."""
    text = re.sub(r"[‐‑‒–—−]", "-", question or "")
    return bool(_HOLD_RUN_ASK.search(text)) and not _SAID_NOT_DONE.search(text)


def named_range(question: str) -> tuple[float, float] | None:
    """The first target range ``question`` writes ("4-1/4 to 4-1/2 percent", "5.25-5.5%"), or None."""
    for m in _NAMED_RANGE.finditer(re.sub(r"[‐‑‒–—−]", "-", question or "")):
        found = _parse_range(m, "t")
        if found is not None:
            return found
    return None


def _hold_run(text: str, groups: list[_Group], tl: Timeline, parsed: DateHint | None) -> EventHint | None:
    """The run a hold-run question names (module docstring), or None when it names none the
    timeline holds, or more than one. ``groups``: the question's event references, resolved."""
    runs = _range_runs(tl)
    target = named_range(text)
    label, said = None, ""  # said: the words that name the run (the hint's text)
    if target is not None:
        said = next(m.group() for m in _NAMED_RANGE.finditer(text) if _parse_range(m, "t") == target)
        candidates = [i for i, (r, _) in enumerate(runs) if r == target]
        label = f"range {_fmt(target)}"
    else:
        m = _AT_EXTREME.search(text)
        mention = _Mention(0, 0, "held", "")
        if m is not None and _set_extreme(mention, m, "t"):
            try:
                chosen, label = _extreme_runs(tl, mention.extreme, mention.ext_window)
            except _Unresolved:
                return None
            starts = {ms[0].date for _, ms in chosen}
            candidates = [i for i, (_, ms) in enumerate(runs) if ms[0].date in starts]
            said = m.group()
        else:
            candidates = list(range(len(runs)))
    anchor = None
    for g in groups:
        if g.res is not None and not _ENDS_RUN.match(text[g.start:]) and not all(x.kind == "held" for x in g.mentions):
            res = g.res
            anchor = res.meetings[0] if res.aftermath or res.since else res.meetings[-1]
            said = said or text[g.start:g.end]
            break
    if anchor is None and parsed is not None and parsed.scope in ("meeting", "month") and parsed.date_from:
        # the range in force after the period the question dates: its last decision's
        last = parsed.date_to or parsed.date_from
        anchor = next((m for m in reversed(tl.meetings)
                       if parsed.date_from <= m.date <= last and m.decision is not None), None)
        said = said or parsed.text
    if anchor is not None:
        # the run in force after the anchor's meeting: the one holding it, else the first after it
        holding = [i for i in candidates if any(m.date == anchor.date for m in runs[i][1])]
        later = [i for i in candidates if runs[i][1][0].date > anchor.date]
        candidates = holding or later[:1]
    elif target is None and label is None:
        return None  # neither a range nor a meeting to start from
    if len(candidates) > 1:
        long = [i for i in candidates if sum(1 for m in runs[i][1] if m.decision) >= 2]
        candidates = long if len(long) == 1 else candidates
    if len(candidates) != 1:
        return None
    i = candidates[0]
    rng, held = runs[i]
    ended = runs[i + 1][1][0] if i + 1 < len(runs) else None
    meetings = tuple(held) + ((ended,) if ended is not None else ())
    holds = sum(1 for m in held if m.decision is not None and m.decision.direction == "hold" and not m.notation_vote)
    set_at = held[0].date if held[0].decision is not None and held[0].decision.direction != "hold" else None
    desc = (f"hold run at {_fmt(rng)}" + (f" ({label})" if label and target is None else "")
            + (f": set {set_at}," if set_at else ": in force from the timeline's start,")
            + f" held at {holds} meeting{'s' if holds != 1 else ''}"
            + (f", ended {ended.date}" if ended is not None else ", not ended in the timeline")
            + (f" (from {anchor.date})" if anchor is not None else ""))
    hint = DateHint(meetings[0].date, meetings[-1].date, _scope(meetings), said.strip())
    return EventHint(hint, tuple(m.date for m in meetings), desc)


def resolve_event(question: str, timeline: Timeline, parsed: DateHint | None = None,
                  locate=None) -> EventHint | None:
    """The meeting(s) an event reference in ``question`` names, or None.

    ``parsed`` is the date parser's hint for the question: when it is set, an event is only
    resolved if every date in the question qualifies an event phrase ("the first cut of 2024",
    "the first cut after the 2022-23 tightening"); a date of the question's own ("in March 2020")
    leaves the parser's hint in charge (None). ``locate(phrase) -> [meeting date, ...]`` (the best
    passages' meeting dates, best first) lets an anchor the timeline does not know be found by
    meeting retrieval ("the first meeting after Silicon Valley Bank failed"); without it such a
    reference gives None."""
    if not question or not len(timeline):
        return None
    text = re.sub(r"[‐‑‒–—−]", "-", question).replace("’", "'")
    mentions = _mentions(text)
    groups = _groups(text, mentions, timeline, locate)  # read once: locating an anchor searches the corpus
    if asks_hold_run(text):
        run = _hold_run(text, groups, timeline, parsed)
        if run is not None:
            return run
    if not mentions:
        return None
    groups = _at_the_meeting_named(groups, timeline)
    if not groups or any(g.res is None for g in groups):
        return None  # no event, or one that does not resolve to meetings (ambiguous, none such)
    tokens = list(_DATE_TOKEN_RE.finditer(text))
    inside = [t for t in tokens if any(g.start <= t.start() and t.end() <= g.end for g in groups)]
    if len(inside) != len(tokens):
        return None  # the question's own date: not a qualifier of an event
    if parsed is not None and not inside:
        return None  # the parser read a date this module does not see; keep the parser's
    if parsed is not None and parsed.scope in ("meeting", "month") and all(
            g.res.aftermath and parsed.date_from <= g.res.meetings[0].date <= (parsed.date_to or "9999")
            for g in groups):
        return None  # "after the October 2019 meeting": the dated meeting itself, as the parser reads it
    groups = _between_groups(text, groups, timeline)
    meetings = _flat(g.res.meetings for g in groups)
    span_text = question[min(g.start for g in groups):max(g.end for g in groups)].strip()
    hint = DateHint(meetings[0].date, meetings[-1].date, _scope(meetings), span_text)
    return EventHint(hint, tuple(m.date for m in meetings), "; ".join(g.res.desc for g in groups))
