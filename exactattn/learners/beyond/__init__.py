"""Beyond the papers (docs/design.md §10): the economy and adaptive schedules, multi-head low
rank, and the genericity of their runs."""
