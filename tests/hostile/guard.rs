//! Hostile inputs: guard (filled in by the work on issue 7).
