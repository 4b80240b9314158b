"""callstream's documents, shipped as package data (``callstream.docs``) so that an installed
callstream reads the same text as a checkout: ``rules.md`` is what ``callstream explain``
prints, rule by rule."""
