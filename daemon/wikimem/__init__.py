"""wikimem: raw documents compiled into a linked Markdown wiki for people and coding agents."""

__version__ = "0.1.0"
