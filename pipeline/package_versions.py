"""The installed version of a distribution, read from its ``.dist-info`` folder name.

importlib.metadata gives the same answer, but importing it loads the email package: 10-30 ms
of the start-up of a run that otherwise only compares keys (the parser key names the block
parser's version). A wheel installs ``NAME-VERSION.dist-info`` with NAME normalised
(lower case, runs of ``-_.`` as ``_``); the first path entry holding one wins, as with
importlib.metadata. Anything else (an egg, a name we cannot find) asks importlib.metadata.
"""

from __future__ import annotations

import os
import re
import sys

_SUFFIX = ".dist-info"


def version(dist: str) -> str:
    prefix = re.sub(r"[-_.]+", "_", dist).lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing folder
            continue
        found = [n for n in names if n.lower().startswith(prefix) and n.endswith(_SUFFIX)]
        if len(found) == 1 and "-" not in found[0][len(prefix) : -len(_SUFFIX)]:
            return found[0][len(prefix) : -len(_SUFFIX)]
        if found:  # several, or a name we do not understand
            break
    from importlib.metadata import version as metadata_version

    return metadata_version(dist)
