//! Hostile inputs: paths (filled in by the work on issue 7).
