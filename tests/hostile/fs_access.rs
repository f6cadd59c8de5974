//! Hostile inputs: fs_access (filled in by the work on issue 7).
