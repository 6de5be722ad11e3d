//! Output parsers for llm-render: reasoning and tool-call state machines.
//!
//! This crate holds pure text state machines with no HTTP and no async runtime in them.
//! Each family will implement the `ReasoningParser` / `ToolParser` traits sketched in
//! `docs/design.md`; one-shot parsing is `push(all)` followed by `finish()`, so streaming
//! and non-streaming cannot disagree. The families land with the derender issue.
