"""Command-line interface (top layer): ``exactattn COMMAND ...``, one module per command."""

from .main import main

__all__ = ["main"]
