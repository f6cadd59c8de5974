//! Hostile inputs: actionlog (filled in by the work on issue 7).
