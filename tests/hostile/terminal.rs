//! Hostile inputs: terminal (filled in by the work on issue 7).
