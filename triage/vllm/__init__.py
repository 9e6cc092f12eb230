"""vLLM's own names in one place: metric names, log-line patterns, flags and default rules."""
