"""The dashboard: pages (straight scripts) and components (own their session keys, return plain values)."""
