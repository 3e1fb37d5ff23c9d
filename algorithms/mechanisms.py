"""Classic DP building blocks (placeholder list; filled in below)."""
