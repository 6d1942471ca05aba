"""Adapters that plug codecite into other frameworks. Each lives in its own module and
needs its framework installed as an extra; importing this package needs none of them.

- :mod:`codecite.integrations.langchain`: :class:`CodeciteRetriever`, a LangChain
  retriever over a local index or a codecite server (``pip install 'codecite[langchain]'``).
"""
