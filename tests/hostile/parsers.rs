//! Hostile inputs: parsers (filled in by the work on issue 7).
