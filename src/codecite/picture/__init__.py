"""Pictures of the code, drawn from the stored graph: the system map (parts of a
repository and the imports and calls between them, ``codecite map``) and a symbol's
neighbourhood (its callers, callees, bases and tests), as SVG laid out here, Mermaid
text or JSON; every box and arrow cited ``path:start-end``."""
