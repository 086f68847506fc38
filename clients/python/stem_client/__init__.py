"""Python client of stem serve: ask questions over a knowledge graph and get
each answer with the KG evidence behind it.

    from stem_client import StemClient, StemError

    stem = StemClient("http://127.0.0.1:8080")
    result = stem.ask("who directed inception ?")
    for a in result.answers:
        print(a.answer, "because", a.chains[0])

Standard library only (urllib, json, dataclasses); Python 3.9 or newer.
"""

from .client import *  # noqa: F401,F403 (the names of client.__all__)
from .client import __all__  # noqa: F401
