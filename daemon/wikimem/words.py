"""Word lists shared by the analysis of sources (analysis.py) and the facts extractor
(facts.py); a module of its own so that neither imports the other."""

from __future__ import annotations

STOPWORDS = frozenset(
    """a about above after again against all almost also although always am among an and another any
    anyone anything are aren't around as at be because been before being below between both but by can
    cannot could couldn't did didn't do does doesn't doing don't down during each either else enough
    etc even ever every few for from further get gets getting got had hadn't has hasn't have haven't
    having he her here hers herself him himself his how however i if in into is isn't it it's its itself
    just least less let lets like likely made make makes making many may me might more most much must my
    myself need needs neither never no nor not now of off often on once one only onto or other others
    otherwise our ours ourselves out over own per perhaps put quite rather really said same see seen
    several shall she should shouldn't since so some something sometimes still such than that that's
    the their theirs them themselves then there there's these they they're thing things this those
    though through thus to too toward towards under until up upon us use used uses using very via was
    wasn't way ways we we'll we're we've well were weren't what what's when where whether which while
    who whom whose why will with within without won't would wouldn't yet you you'll you're you've your
    yours yourself yourselves i'm i've i'll let's""".split()
)
