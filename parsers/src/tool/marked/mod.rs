//! Tool calls between markers, with JSON arguments: one state machine for the families
//! below, each described by data ([`Spec`]).
//!
//! | family | wire format |
//! |---|---|
//! | `hermes` (Qwen 2.5/3, Hermes) | `<tool_call>\n{"name": "f", "arguments": {..}}\n</tool_call>`, anywhere in the text |
//! | `longcat` | hermes's, between `<longcat_tool_call>` and `</longcat_tool_call>` |
//! | `granite4` (Granite 4.0) | hermes's, text around and between calls kept |
//! | `phi4_mini_json` (Phi-4-mini) | `functools[{"name": "f", "arguments": {..}}, ..]` |
//! | `granite` (Granite 3.0/3.1) | `<\|tool_call\|>` or `<tool_call>`, then `[{"name": "f", "arguments": {..}}, ..]`, no end marker |
//! | `apertus` (Apertus) | `<\|tools_prefix\|>[{"f": {..}}, ..]<\|tools_suffix\|>`, the suffix optional |
//! | `xlam` (Salesforce xLAM) | `[{"name": "f", "arguments": {..}}, ..]` at the start or after `</think>`, `[TOOL_CALLS]`, `<tool_call>` or a ```` ```json ```` fence |
//! | `jamba` (AI21 Jamba 1.5+), `hunyuan_a13b` (Hunyuan-A13B) | `<tool_calls>[{"name": "f", "arguments": {..}}, ..]</tool_calls>` |
//! | `internlm` (InternLM2/2.5) | hermes's, between `<\|action_start\|><\|plugin\|>` and `<\|action_end\|>` |
//! | `granite-20b-fc` | `<function_call> {"name": "f", "arguments": {..}}`, repeated per call |
//! | `gigachat3` (GigaChat 3/3.1) | `<\|message_sep\|>\n\nfunction call<\|role_sep\|>\n{"name": "f", "arguments": {..}}` (3) or `<\|function_call\|>{..}` (3.1), then `</s>` where written |
//! | `llama3_json` | `<\|python_tag\|>{"name": "f", "parameters": {..}}`, or the same object as the first thing in the output; several joined by `;` |
//! | `mistral` | `[TOOL_CALLS][{"name": "f", "arguments": {..}}, ..]` (v0.3) or `[TOOL_CALLS]f[ARGS]{..}` or `[TOOL_CALLS]f{..}` (v11+), repeated per call |
//! | `deepseek_v3` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{..}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` |
//! | `deepseek_v31` | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{..}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>` |
//! | `plamo3` (PLaMo 3) | `<\|plamo:begin_tool_requests:plamo\|><\|plamo:begin_tool_request:plamo\|><\|plamo:begin_tool_name:plamo\|>f<\|plamo:end_tool_name:plamo\|><\|plamo:begin_tool_arguments:plamo\|><\|plamo:constrain\|>json<\|plamo:msg\|>{..}<\|plamo:end_tool_arguments:plamo\|><\|plamo:end_tool_request:plamo\|>…<\|plamo:end_tool_requests:plamo\|>` |
//! | `kimi_k2` | `<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions.f:0<\|tool_call_argument_begin\|>{..}<\|tool_call_end\|>…<\|tool_calls_section_end\|>` |
//!
//! These are the formats vLLM's parsers of the same names read (`vllm/entrypoints/openai/
//! tool_parsers/`); `parameters` is accepted wherever `arguments` is. Text outside calls is
//! content, kept in order; whitespace between calls is dropped.

mod modes;
mod object;
mod raw;
mod spec;

use super::engine_content::EngineContent;
use super::json_scan::ValueScan;
use super::{Parsed, Scan, ToolParser, MAX_NAME};
use modes::{At, Flow};
use object::ObjPhase;
use serde::{Deserialize, Serialize};
use spec::{CallForm, Spec};

/// The families this machine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkedFamily {
    Hermes,
    /// LongCat-Flash: hermes between `<longcat_tool_call>` tags (vLLM's `longcat` subclasses
    /// hermes).
    LongCat,
    /// Granite 4.0: hermes's tags; text around calls stays content.
    Granite4,
    /// Phi-4-mini: the text `functools` right before a Mistral-style array of calls.
    Phi4MiniJson,
    /// Granite 3.0/3.1: `<|tool_call|>` (3.0's token) or `<tool_call>` (3.1's text), then a
    /// Mistral-style array of calls that its `]` ends; run on vLLM's parser engine.
    Granite,
    /// Apertus: `<|tools_prefix|>`, then an array of `{"name": arguments}` objects (or one
    /// such object), then `<|tools_suffix|>` where the model writes it.
    Apertus,
    /// Salesforce xLAM: a Mistral-style array of calls, bare at the start (or after
    /// `</think>`), after `[TOOL_CALLS]`, or in a ```` ```json ```` fence or
    /// `<tool_call>…</tool_call>`.
    Xlam,
    /// AI21 Jamba: a Mistral-style array of calls between `<tool_calls>` and `</tool_calls>`.
    Jamba,
    /// InternLM2: hermes between `<|action_start|><|plugin|>` and `<|action_end|>`.
    Internlm,
    /// Granite-20B-FunctionCalling: `<function_call>` then a call object, no end marker.
    Granite20bFc,
    /// GigaChat 3 and 3.1: a header (two spellings), then a call object, then `</s>` where
    /// the model writes it.
    Gigachat3,
    Llama3Json,
    Mistral,
    DeepseekV3,
    DeepseekV31,
    KimiK2,
    /// PLaMo 3: a section of named calls with JSON arguments; its end of turn
    /// (`<|plamo:tag|>`) is dropped, and a marker cut off at the end of the output too.
    Plamo3,
}

impl MarkedFamily {
    /// Whether vLLM's parser writes a call's arguments anew (`json.dumps(args,
    /// ensure_ascii=False)`: `", "` and `": "`, one line) rather than as the model wrote
    /// them: granite-20b-fc's, granite4's, phi4mini's, jamba's, apertus's, xlam's,
    /// internlm2's and gigachat3's do.
    fn reserializes(self) -> bool {
        matches!(
            self,
            MarkedFamily::Granite20bFc
                | MarkedFamily::Granite4
                | MarkedFamily::Phi4MiniJson
                | MarkedFamily::Jamba
                | MarkedFamily::Apertus
                | MarkedFamily::Xlam
                | MarkedFamily::Internlm
                | MarkedFamily::Gigachat3
        )
    }

    /// Whether the calls sit in a Mistral-style `[..]` array after the call marker.
    fn array_body(self) -> bool {
        matches!(
            self,
            MarkedFamily::Mistral
                | MarkedFamily::Phi4MiniJson
                | MarkedFamily::Jamba
                | MarkedFamily::Granite
                | MarkedFamily::Apertus
                | MarkedFamily::Xlam
        )
    }

    /// Whether vLLM runs the family on its parser engine, whose content this machine follows
    /// (see [`EngineContent`]) and which drops a call opener that no call follows (granite's
    /// marker, and what was read after it, where no array of calls is).
    fn on_engine(self) -> bool {
        matches!(
            self,
            MarkedFamily::KimiK2 | MarkedFamily::Granite | MarkedFamily::Plamo3
        )
    }

    /// Markers dropped wherever content has them (PLaMo 3's end of turn, which vLLM's
    /// engine drops and reads on after).
    fn dropped(self) -> &'static [&'static str] {
        match self {
            MarkedFamily::Plamo3 => &[PLAMO_EOT],
            _ => &[],
        }
    }

    /// Markers whose start at the very end of the output is dropped, as vLLM's plamo3
    /// strips a marker cut off there (held back until then).
    fn cut_markers(self) -> &'static [&'static str] {
        match self {
            MarkedFamily::Plamo3 => &PLAMO_MARKERS,
            _ => &[],
        }
    }

    /// The families that open their block of calls in more than one way, or close it with a
    /// marker the model may leave out: each opener with that marker, which is dropped where
    /// it comes next after the block. Empty: the `Spec`'s opener alone, nothing after.
    fn openers(self) -> &'static [Opener] {
        match self {
            MarkedFamily::Granite => &GRANITE_OPENERS,
            MarkedFamily::Apertus => &APERTUS_OPENERS,
            MarkedFamily::Xlam => &XLAM_OPENERS,
            MarkedFamily::Gigachat3 => &GIGACHAT3_OPENERS,
            _ => &[],
        }
    }
}

const fn open(start: &'static str, end: Option<&'static str>) -> Opener {
    Opener { start, end }
}

/// Granite 3.1 writes `<tool_call>` as text where 3.0 has its token.
const GRANITE_OPENERS: [Opener; 2] = [open("<|tool_call|>", None), open("<tool_call>", None)];
const APERTUS_OPENERS: [Opener; 1] = [open("<|tools_prefix|>", Some("<|tools_suffix|>"))];
/// The formats vLLM's xlam finds, `[TOOL_CALLS]`'s array ending the block; a bare array at
/// the start, and after `</think>`, is read too (`step_content`).
const XLAM_OPENERS: [Opener; 5] = [
    open("<tool_call>", Some("</tool_call>")),
    open("[TOOL_CALLS]", None),
    open("```json", Some("```")),
    open("```", Some("```")),
    open(THINK_END, None),
];

/// GigaChat 3's header and 3.1's token; `</s>` after the call is dropped, as vLLM drops it.
const GIGACHAT3_OPENERS: [Opener; 2] = [
    open(
        "<|message_sep|>\n\nfunction call<|role_sep|>\n",
        Some("</s>"),
    ),
    open("<|function_call|>", Some("</s>")),
];

/// PLaMo 3's end of turn.
const PLAMO_EOT: &str = "<|plamo:tag|>";
/// Every PLaMo 3 marker vLLM's plamo3 knows (`vllm/parser/plamo3.py`).
const PLAMO_MARKERS: [&str; 13] = [
    "<|plamo:begin_tool_requests:plamo|>",
    "<|plamo:end_tool_requests:plamo|>",
    "<|plamo:begin_tool_request:plamo|>",
    "<|plamo:end_tool_request:plamo|>",
    "<|plamo:begin_tool_name:plamo|>",
    "<|plamo:end_tool_name:plamo|>",
    "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>",
    "<|plamo:end_tool_arguments:plamo|>",
    "<|plamo:begin_think:plamo|>",
    "<|plamo:end_think:plamo|>",
    PLAMO_EOT,
    "<|plamo:constrain|>",
    "<|plamo:msg|>",
];

/// One way a family opens its block of calls (see [`MarkedFamily::openers`]).
struct Opener {
    start: &'static str,
    end: Option<&'static str>,
}

/// The end of xlam's thinking: content, after which a bare array of calls may come.
const THINK_END: &str = "</think>";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Ordinary text. `at_start`: only whitespace so far (llama3_json's bare JSON).
    Content {
        at_start: bool,
    },
    /// Inside a section, between calls.
    Section,
    /// Just after mistral's `[TOOL_CALLS]`: array, object or name follows.
    MistralBody,
    /// Inside mistral's `[..]` array, between call objects.
    MistralArray,
    Object(ObjPhase),
    Name,
    Args,
    /// The call's value is done: drop text up to the call's end marker.
    AfterCall,
    /// Between calls of a family without sections: whitespace (and llama3_json's `;`) is
    /// dropped before another call or at the end, and is content before other text.
    Between,
}

/// The state machine for the [`MarkedFamily`] formats; serializable between stream chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MarkedParser {
    family: MarkedFamily,
    mode: Mode,
    /// Text received and not yet processed (a partial marker, at most).
    buf: String,
    /// Text consumed since a call began and before its name was known: content again if the
    /// call turns out malformed.
    pending: String,
    /// The current JSON value (arguments, or a key/name string being read).
    scan: ValueScan,
    /// A key or name being read, raw.
    token: String,
    /// The current object member's key.
    key: String,
    /// The current call's arguments so far, as written (object bodies may list them before
    /// the name). Held until the call ends: a call is sent only once its arguments are
    /// whole, valid JSON.
    #[serde(default)]
    args: String,
    /// The current call's name (and Kimi K2's id), once read.
    #[serde(default)]
    name: Option<(String, Option<String>)>,
    /// Calls sent so far; the next is `calls`.
    calls: usize,
    /// Whether the current call's name is known.
    committed: bool,
    /// Whether the mistral call being read sits in a `[..]` array.
    in_array: bool,
    /// kimi_k2's and granite's content, as vLLM's parser engine streams it.
    #[serde(default)]
    engine_content: EngineContent,
    /// Which of the family's `openers` opened the current block.
    #[serde(default)]
    opener: usize,
    /// The current call's text as written, where the family turns a broken call into
    /// content (`raw.rs`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    raw: String,
}

enum Mark {
    Yes,
    Partial,
    No,
}

fn mark(rest: &str, marker: &str, at_end: bool) -> Mark {
    if rest.starts_with(marker) {
        Mark::Yes
    } else if !at_end && !rest.is_empty() && marker.starts_with(rest) {
        Mark::Partial
    } else {
        Mark::No
    }
}

impl MarkedParser {
    pub fn new(family: MarkedFamily) -> Self {
        MarkedParser {
            family,
            mode: Mode::Content { at_start: true },
            buf: String::new(),
            pending: String::new(),
            scan: ValueScan::default(),
            token: String::new(),
            key: String::new(),
            args: String::new(),
            name: None,
            calls: 0,
            committed: false,
            in_array: false,
            engine_content: EngineContent::default(),
            opener: 0,
            raw: String::new(),
        }
    }

    fn spec(&self) -> Spec {
        self.family.spec()
    }

    /// A call begins: what was consumed for it so far is `pending`.
    fn begin_call(&mut self) {
        self.committed = false;
        self.token.clear();
        self.key.clear();
        self.args.clear();
        self.name = None;
        self.scan = ValueScan::default();
    }

    /// The call's name is known: it is held with the call until the call ends.
    fn commit(&mut self, name: String, id: Option<String>) {
        self.engine_content.call_started();
        self.committed = true;
        self.pending.clear();
        self.name = Some((name, id));
    }

    fn send_args(&mut self, text: &str) {
        self.args.push_str(text);
    }

    /// The current call is complete: it is sent, name and arguments in one delta, when its
    /// arguments are valid JSON (none at all are `{}`); a call whose arguments are not (cut
    /// off, or broken) is dropped, as vLLM's one-shot parsers drop it, so no client is handed
    /// arguments its JSON reader rejects.
    fn end_call(&mut self, out: &mut Parsed) {
        let args = std::mem::take(&mut self.args);
        if let (true, Some((name, id))) = (self.committed, self.name.take()) {
            let args = if args.trim().is_empty() {
                "{}".to_string()
            } else {
                args
            };
            let args = match serde_json::from_str::<serde_json::Value>(&args) {
                Ok(v) if self.family.reserializes() => Some(crate::pyjson::dumps(&v)),
                Ok(_) => Some(args),
                Err(_) => None,
            };
            if let Some(args) = args {
                out.start_call(self.calls, name, id);
                out.args(self.calls, &args);
                self.calls += 1;
            }
        }
        self.committed = false;
        self.name = None;
    }

    /// Appends content: kimi_k2's and granite's (which vLLM runs on its parser engine) as the
    /// engine streams it (see [`EngineContent`]), the other families' as it comes.
    fn push_content(&mut self, text: &str, out: &mut Parsed) {
        if self.family.on_engine() {
            self.engine_content.push(text, self.calls > 0, out);
        } else {
            out.content.push_str(text);
        }
    }

    /// Not a call after all: what was consumed for it is content (granite's engine drops
    /// it: the marker, and any whitespace and `[` after it), and so is what follows.
    fn malformed(&mut self, out: &mut Parsed) {
        let pending = std::mem::take(&mut self.pending);
        if self.family != MarkedFamily::Granite {
            self.push_content(&pending, out);
        }
        self.args.clear();
        self.name = None;
        self.committed = false;
        self.in_array = false;
        self.mode = Mode::Content { at_start: false };
    }

    /// Where to go once a call's end marker is consumed: back into the section, or between
    /// calls.
    fn after_call_mode(&self) -> Mode {
        if self.spec().section.is_some() {
            Mode::Section
        } else {
            Mode::Between
        }
    }
}

impl Scan for MarkedParser {
    fn buf(&mut self) -> &mut String {
        &mut self.buf
    }

    /// Consumes as much of `text` as can be decided; returns the bytes consumed. One step
    /// per mode (`modes.rs`).
    fn run(&mut self, text: &str, at_end: bool, out: &mut Parsed) -> usize {
        let mut i = 0;
        while i < text.len() {
            let at = At { text, i, at_end };
            let before = self.mode;
            let flow = match self.mode {
                Mode::Content { at_start } => self.step_content(at, at_start, out),
                Mode::Section => self.step_section(at, out),
                Mode::MistralBody => self.step_mistral_body(at, out),
                Mode::MistralArray => self.step_mistral_array(at, out),
                Mode::Name => self.step_name(at, out),
                Mode::Args => self.step_args(at, out),
                Mode::Object(phase) => self.step_object(at, phase, out),
                Mode::AfterCall => self.step_after_call(at),
                Mode::Between => self.step_between(at),
            };
            match flow {
                Flow::Next(next) => {
                    self.note_raw(before, &text[i..next]);
                    i = next;
                }
                Flow::Stop(done) => {
                    self.note_raw(before, &text[i..done]);
                    return done;
                }
            }
        }
        i
    }
}

impl MarkedParser {
    /// Kimi K2 writes `functions.NAME:IDX` and uses it as the call id. As vLLM's parser
    /// engine reads it (`_TOOL_ID_RE`, `.+:\d+`): the id runs to the digits after the last
    /// `:` that has some, the name is the id up to its first `:` without `functions.`.
    /// `None`: no such header (a bare `0`, no counter), and vLLM drops the call.
    fn call_name(&self, raw: &str) -> Option<(String, Option<String>)> {
        if self.family != MarkedFamily::KimiK2 {
            return Some((raw.to_string(), None));
        }
        let b = raw.as_bytes();
        let colon = (1..b.len())
            .rev()
            .find(|&p| b[p] == b':' && b.get(p + 1).is_some_and(u8::is_ascii_digit))?;
        let digits = b[colon + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let id = &raw[..colon + 1 + digits];
        let head = id.split(':').next().unwrap_or_default();
        let name = head.strip_prefix("functions.").unwrap_or(head);
        Some((name.to_string(), Some(id.to_string())))
    }
}

impl MarkedParser {
    /// The end of PLaMo 3's output: a marker cut off in content is dropped (vLLM's
    /// `_strip_unfinished_marker`), and so is a call cut off in its name, markers and all.
    fn finish_plamo3(&mut self) {
        let cut = |m: &&str| m.len() > self.buf.len() && m.starts_with(self.buf.as_str());
        if matches!(self.mode, Mode::Content { .. })
            && self.buf.starts_with("<|plamo:")
            && self.family.cut_markers().iter().any(cut)
        {
            self.buf.clear();
        }
        if self.mode == Mode::Name {
            self.buf.clear();
            self.pending.clear();
            self.mode = Mode::Section;
        }
    }
}

impl ToolParser for MarkedParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        self.feed(text, out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        if self.family == MarkedFamily::Plamo3 {
            self.finish_plamo3();
        }
        self.drive(true, out);
        self.finish_raw(out);
        // A call cut off here is sent only if what it has is whole, valid JSON.
        self.end_call(out);
        if self.family == MarkedFamily::KimiK2 && self.mode == Mode::Section {
            // Inside kimi_k2's tool preamble (see `step_section`): nothing more is content.
            self.pending.clear();
        }
        // An unfinished call header is content (granite's engine drops it).
        let pending = std::mem::take(&mut self.pending);
        if self.family != MarkedFamily::Granite {
            self.push_content(&pending, out);
        }
        self.engine_content.finish(self.calls > 0, out);
        self.buf.clear();
    }
}
