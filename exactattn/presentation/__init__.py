"""Presentation (layer 6, above analysis): the narrated demo and progress lines on a
terminal."""
