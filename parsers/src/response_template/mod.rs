//! vLLM's `hf` parser (`--reasoning-parser hf`, `--tool-call-parser hf`,
//! `vllm/parser/response_template.py`): reasoning, content and tool calls split by the
//! `response_template` metadata a checkpoint ships in `tokenizer_config.json` (Gemma 4's, for
//! one), not by a format of its own.
//!
//! vLLM runs one machine for both parsers ([`ResponseTemplateParser`], its
//! `ResponseTemplateParser` + `_ResponseStream`), over the prompt's text after its last
//! `start_anchor` and then the output, so a region the prompt opened (a `<think>` the chat
//! template wrote) goes on in the output:
//! * `thinking` text is reasoning when the reasoning parser is `hf`, else content;
//! * `content` text is content;
//! * a `tool_calls` region, with tool parsing on, is held until it closes (or the output
//!   ends) and becomes its calls, each sent whole; a region whose value does not parse, or
//!   whose calls lack a name or arguments, is dropped. With tool parsing off, its text and
//!   delimiters are content.
//!
//! The other delimiters are dropped. [`template`] says which templates llm-render runs; the
//! rest are refused when loaded, never run differently.

mod beam;
mod content;
mod grammar;
mod literals;
mod pattern;
mod regions;
mod template;
mod tool_tag;
mod word;
mod xgrammar;

pub use beam::{BeamRefusal, BeamRequest, BeamTag, BeamTemplate};
pub use template::ResponseTemplate;

impl ResponseTemplate {
    /// The machine after a prompt, and the regions the prompt opens and closes, as
    /// `ResponseParser(template, prefix=prompt)` reports them (values not read).
    fn after_prompt(&self, prompt: &str) -> (Regions, Vec<Event>) {
        let mut regions = Regions::new(self);
        let mut events = Vec::new();
        regions.prefix(self, prompt, &no_value, &mut events);
        (regions, events)
    }

    /// vLLM's `_open_field` (`beam.py`): the field the prompt leaves open with its explicit
    /// opener, if any (the prompt's events as `ResponseParser(template, prefix=prompt)` gives
    /// them).
    pub(crate) fn open_field(&self, prompt: &str) -> Option<&str> {
        let (_, events) = self.after_prompt(prompt);
        let mut open = None;
        for e in &events {
            match e {
                Event::Open {
                    field,
                    explicit: true,
                    ..
                } => open = Some(self.fields[*field].name.as_str()),
                Event::Close { .. } => open = None,
                _ => {}
            }
        }
        open
    }

    /// Where the prompt's last start anchor ends (0 without one).
    pub(crate) fn last_anchor_end(&self, prompt: &str) -> usize {
        regions::last_anchor_end(&self.start_anchor, prompt)
    }

    /// vLLM's `ResponseTemplateReasoningParser.is_reasoning_end` of a prompt (its token IDs
    /// decoded with special tokens): whether output after it starts past reasoning, which
    /// decides when a structured-output constraint starts. `thinking_disabled`: the request's
    /// `enable_thinking` is false (vLLM's constructor reads `chat_template_kwargs`).
    pub fn prompt_ends_reasoning(&self, prompt: &str, thinking_disabled: bool) -> bool {
        let Some(thinking) = self.field(THINKING) else {
            return true;
        };
        if self.fields[thinking].repeats {
            return false;
        }
        let is = |field: usize, names: &[&str]| names.contains(&self.fields[field].name.as_str());
        let (mut regions, events) = self.after_prompt(prompt);
        let mut active = None;
        let mut closed = false;
        for e in &events {
            match e {
                Event::Open { field, .. } => active = Some(*field),
                Event::Close { field, .. } => {
                    closed |= *field == thinking;
                    active = None;
                }
                Event::Chunk { .. } => {}
            }
        }
        if closed || active.is_some_and(|f| is(f, &[CONTENT, TOOLS])) {
            return true;
        }
        // A NUL, which no output spells, resolves a delimiter the prompt ends in.
        let mut probe = Vec::new();
        regions.push(self, "\0", &no_value, &mut probe);
        for e in &probe {
            match e {
                Event::Open {
                    field,
                    explicit: true,
                    ..
                } if is(*field, &[CONTENT, TOOLS]) => return true,
                Event::Open { field, .. } if *field == thinking => return false,
                Event::Close { field, .. } if *field == thinking => return true,
                _ => {}
            }
        }
        if active == Some(thinking) {
            return false;
        }
        thinking_disabled
    }
}

/// vLLM's `validate_tokenizer_response_template`: the startup check of `--reasoning-parser hf`
/// (`reasoning`) and `--tool-call-parser hf` (`tools`) against the tokenizer's
/// `response_template` metadata (`template`, `None` when it has none).
pub fn check_response_template(
    template: Option<&Value>,
    reasoning: bool,
    tools: bool,
) -> Result<ResponseTemplate, String> {
    check_response_template_for("hf", template, reasoning, tools)
}

/// [`check_response_template`] for the parser `name` (`hf` or `beam`), named in the errors as
/// vLLM names the flag given.
pub fn check_response_template_for(
    name: &str,
    template: Option<&Value>,
    reasoning: bool,
    tools: bool,
) -> Result<ResponseTemplate, String> {
    let template = template.filter(|t| t.is_object()).ok_or_else(|| {
        format!(
            "The {name} parser requires `response_template` metadata in the tokenizer \
             configuration"
        )
    })?;
    let loaded = ResponseTemplate::from_json(template)
        .map_err(|e| format!("Invalid response_template metadata: {e}"))?;
    if reasoning && !loaded.has_thinking() {
        return Err(format!(
            "--reasoning-parser {name} requires a response_template with a thinking field"
        ));
    }
    if tools && !loaded.has_tool_calls() {
        return Err(format!(
            "--tool-call-parser {name} requires a response_template with a tool_calls field"
        ));
    }
    Ok(loaded)
}

use crate::tool::coerce::marked;
use crate::tool::{Parsed, ToolParser, ToolSchemas};
use regions::{Event, Regions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use template::{CONTENT, THINKING, TOOLS};

/// vLLM's refusal (`ResponseTemplateParser.adjust_request`, a 400) of a request with tools and
/// a `tool_choice` other than `none`, under `--tool-call-parser hf`, that asks for what no
/// grammar can hold the model to here: the message and the parameter it names, for the first
/// of strict tools, `tool_choice: "required"`, a named tool, `parallel_tool_calls: false`.
/// `tool_choice` is the request's effective one (`auto` where tools are given without it).
pub fn response_template_refusal(
    tools: &[Value],
    tool_choice: &Value,
    parallel_tool_calls: Option<bool>,
) -> Option<(String, &'static str)> {
    if tools.is_empty() || tool_choice == "none" {
        return None;
    }
    let strict = |t: &Value| {
        let set = |v: Option<&Value>| v.is_some_and(crate::registry::truthy);
        set(t.get("strict")) || set(t.get("function").and_then(|f| f.get("strict")))
    };
    let (guarantee, parameter) = if tools.iter().any(strict) {
        ("strict tools", "tools")
    } else if tool_choice == "required" {
        ("required tool choice", "tool_choice")
    } else if tool_choice.is_object() {
        ("named tool choice", "tool_choice")
    } else if parallel_tool_calls == Some(false) {
        ("parallel_tool_calls=False", "parallel_tool_calls")
    } else {
        return None;
    };
    Some((
        format!(
            "response_template parsing cannot guarantee {guarantee} without a \
             format-compatible structural grammar"
        ),
        parameter,
    ))
}

/// The `hf` parser for one output. Read back from a stream state only if its template and
/// machine could have been made here ([`ResponseTemplate::check`], `Regions::check`): a state
/// is signed, but a forged one must still not make the machine panic or loop.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "Carried")]
pub struct ResponseTemplateParser {
    template: ResponseTemplate,
    regions: Regions,
    /// `--reasoning-parser hf`: thinking is reasoning (else content).
    reasoning: bool,
    /// `--tool-call-parser hf` on a request that asks for calls: tool regions are calls (else
    /// content).
    calls: bool,
    /// Whether any output was read (vLLM ends the parse only then).
    output: bool,
    done: bool,
    /// Calls sent so far.
    next_call: usize,
    /// The reasoning token count (`--reasoning-parser hf` and a `thinking` field only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    counter: Option<Box<ReasoningCounter>>,
    /// The request's tools, which type the calls' arguments; not carried in a stream state
    /// (given back by [`ResponseTemplateParser::set_schemas`]).
    #[serde(skip)]
    schemas: Arc<ToolSchemas>,
}

/// [`ResponseTemplateParser`] as a stream state carries it, before it is checked.
#[derive(Deserialize)]
struct Carried {
    template: ResponseTemplate,
    regions: Regions,
    reasoning: bool,
    calls: bool,
    output: bool,
    done: bool,
    next_call: usize,
    #[serde(default)]
    counter: Option<Box<ReasoningCounter>>,
}

impl TryFrom<Carried> for ResponseTemplateParser {
    type Error = String;

    fn try_from(c: Carried) -> Result<Self, String> {
        c.template.check()?;
        c.regions.check(&c.template)?;
        if let Some(counter) = &c.counter {
            counter.regions.check(&c.template)?;
        }
        Ok(ResponseTemplateParser {
            template: c.template,
            regions: c.regions,
            reasoning: c.reasoning,
            calls: c.calls,
            output: c.output,
            done: c.done,
            next_call: c.next_call,
            counter: c.counter,
            schemas: Arc::default(),
        })
    }
}

impl ResponseTemplateParser {
    /// A parser for one output of a prompt whose text (decoded with its special tokens, as
    /// vLLM's `set_prompt_token_ids` decodes it; empty when unknown) is `prompt`.
    pub fn new(
        template: ResponseTemplate,
        prompt: &str,
        schemas: Arc<ToolSchemas>,
        reasoning: bool,
        calls: bool,
    ) -> Self {
        let mut regions = Regions::new(&template);
        regions.prefix(
            &template,
            prompt,
            &|f, body, caps| content::value(f, body, caps, &schemas),
            &mut Vec::new(),
        );
        let counter = reasoning
            .then(|| ReasoningCounter::new(&template, prompt).map(Box::new))
            .flatten();
        ResponseTemplateParser {
            template,
            regions,
            reasoning,
            calls,
            output: false,
            done: false,
            next_call: 0,
            counter,
            schemas,
        }
    }

    /// vLLM 0.33's `ResponseTemplateParser.count_reasoning_tokens` over a growing generation:
    /// reads its next tokens, each one's text decoded alone with its special tokens (vLLM's
    /// `_decode` of one ID), and gives how many of the generation's tokens so far the
    /// template reads as reasoning. 0 unless the reasoning parser is `hf` and the template
    /// has a `thinking` field.
    pub fn count_reasoning_tokens(&mut self, token_texts: &[String]) -> usize {
        match self.counter.as_mut() {
            Some(c) => c.count(&self.template, token_texts),
            None => 0,
        }
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        self.schemas = schemas;
    }

    /// Reads the next text: reasoning appended to `reasoning`, content and calls to `out`.
    pub fn push(&mut self, text: &str, reasoning: &mut String, out: &mut Parsed) {
        if self.done {
            return;
        }
        self.output |= !text.is_empty();
        let mut events = Vec::new();
        let schemas = self.schemas.clone();
        self.regions.push(
            &self.template,
            text,
            &|f, body, caps| content::value(f, body, caps, &schemas),
            &mut events,
        );
        self.route(events, reasoning, out);
    }

    /// The end of the output (vLLM 0.33's `_ResponseStream.feed` with `finished=True`): an
    /// output that stopped inside a closer ending in the next message's start anchor gets the
    /// rest of that closer (`_closer_rest`), so its region closes; a region still open then
    /// is parsed as written.
    pub fn finish(&mut self, reasoning: &mut String, out: &mut Parsed) {
        if std::mem::replace(&mut self.done, true) || !self.output {
            return;
        }
        let mut events = Vec::new();
        let schemas = self.schemas.clone();
        let value = |f: &template::Field, body: &str, caps: &[(String, String)]| {
            content::value(f, body, caps, &schemas)
        };
        let rest = self.regions.closer_rest(&self.template);
        if !rest.is_empty() {
            self.regions
                .push(&self.template, &rest, &value, &mut events);
        }
        self.regions.finish(&self.template, &value, &mut events);
        self.route(events, reasoning, out);
    }

    /// vLLM's `_ResponseStream._route`.
    fn route(&mut self, events: Vec<Event>, reasoning: &mut String, out: &mut Parsed) {
        for e in events {
            let field = match &e {
                Event::Open { field, .. }
                | Event::Chunk { field, .. }
                | Event::Close { field, .. } => self.template.fields[*field].name.as_str(),
            };
            match (field, e) {
                (TOOLS, Event::Chunk { text, .. }) if !self.calls => out.content.push_str(&text),
                (TOOLS, Event::Open { delim, .. } | Event::Close { delim, .. }) if !self.calls => {
                    out.content.push_str(&delim)
                }
                (TOOLS, Event::Close { value: Some(v), .. }) => {
                    for (name, arguments) in tool_calls(&v.value, v.exact) {
                        out.start_call(self.next_call, name, None);
                        out.args(self.next_call, &arguments);
                        self.next_call += 1;
                    }
                }
                (THINKING, Event::Chunk { text, .. }) if self.reasoning => {
                    reasoning.push_str(&text)
                }
                (THINKING | CONTENT, Event::Chunk { text, .. }) => out.content.push_str(&text),
                _ => {}
            }
        }
    }
}

/// vLLM 0.33's `_ReasoningTokenCounter`: the template's machine run over the prompt's part and
/// the generated tokens' texts, without routing; a token counts when its text overlaps the
/// text between a thinking region's delimiters (a region still open runs to the end, so text
/// held as a possible closer counts until the closer comes). Offsets are in the text read
/// (the prompt's part, then the output). A token ending before the text still undecided is
/// counted for good and dropped, with the regions closed before every other token, so the
/// state a stream carries stays small.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReasoningCounter {
    regions: Regions,
    /// Where the text read so far ends.
    end: usize,
    /// Tokens counted for good.
    settled: usize,
    /// The other tokens: where each one's text starts and ends.
    pending: Vec<(usize, usize)>,
    /// Thinking regions closed: where the text after the opener starts, and the closer.
    spans: Vec<(usize, usize)>,
    /// Where the open thinking region's text starts.
    open: Option<usize>,
}

impl ReasoningCounter {
    /// `None` for a template without a `thinking` field (vLLM counts none).
    fn new(template: &ResponseTemplate, prompt: &str) -> Option<Self> {
        template.field(THINKING)?;
        let mut counter = ReasoningCounter {
            regions: Regions::new(template),
            end: prompt.len() - template.last_anchor_end(prompt),
            settled: 0,
            pending: Vec::new(),
            spans: Vec::new(),
            open: None,
        };
        let mut events = Vec::new();
        counter
            .regions
            .prefix(template, prompt, &no_value, &mut events);
        counter.track(template, &events);
        Some(counter)
    }

    /// vLLM's `_ReasoningTokenCounter.count` of the generation grown by `token_texts`.
    fn count(&mut self, template: &ResponseTemplate, token_texts: &[String]) -> usize {
        for text in token_texts {
            let start = self.end;
            self.end = self.end.saturating_add(text.len());
            self.pending.push((start, self.end));
        }
        let mut events = Vec::new();
        self.regions
            .push(template, &token_texts.concat(), &no_value, &mut events);
        self.track(template, &events);
        let open = self.open.map(|o| (o, usize::MAX));
        let counts = |&(start, end): &(usize, usize)| {
            self.spans
                .iter()
                .chain(open.iter())
                .any(|&(begin, close)| begin < end && start < close)
        };
        // Text before the undecided part is in no region to come.
        let decided = self.regions.decided();
        let settled = self.pending.partition_point(|&(_, end)| end <= decided);
        self.settled += self.pending[..settled].iter().filter(|t| counts(t)).count();
        let pending = self.pending[settled..].iter().filter(|t| counts(t)).count();
        self.pending.drain(..settled);
        if let Some(&(first, _)) = self.pending.first() {
            self.spans.retain(|&(_, close)| close > first);
        } else {
            self.spans.clear();
        }
        self.settled + pending
    }

    /// vLLM's `_ReasoningTokenCounter._track`: the thinking regions' spans.
    fn track(&mut self, template: &ResponseTemplate, events: &[Event]) {
        let Some(thinking) = template.field(THINKING) else {
            return;
        };
        for e in events {
            match e {
                Event::Open { field, end, .. } if *field == thinking => self.open = Some(*end),
                Event::Close { field, start, .. } if *field == thinking => {
                    if let Some(open) = self.open.take() {
                        self.spans.push((open, *start));
                    }
                }
                _ => {}
            }
        }
    }
}

/// A region's value where only the regions matter (prompt walks, the reasoning count).
fn no_value(_: &template::Field, _: &str, _: &[(String, String)]) -> Option<content::Valued> {
    Some(content::Valued {
        value: Value::Null,
        exact: false,
    })
}

/// As a tool parser alone (`--tool-call-parser hf` without the reasoning parser), thinking
/// is content.
impl ToolParser for ResponseTemplateParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        ResponseTemplateParser::push(self, text, &mut String::new(), out);
    }

    fn finish(&mut self, out: &mut Parsed) {
        ResponseTemplateParser::finish(self, &mut String::new(), out);
    }
}

/// vLLM's `_to_tool_calls`: each call's name and arguments (JSON text; an object written as
/// Python's `json.dumps` writes it), or none if any call lacks them. `exact`: the value's
/// marked strings are integers past 64 bits (`content::Valued`).
fn tool_calls(value: &Value, exact: bool) -> Vec<(String, String)> {
    let int = |v: &Value| exact && v.as_str().and_then(marked).is_some();
    let items = match value {
        Value::Array(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    let mut calls = Vec::new();
    for item in items {
        let Some(function) = item.get("function").and_then(Value::as_object) else {
            return Vec::new();
        };
        let name = match function.get("name") {
            Some(Value::String(n)) if !n.is_empty() && !int(&Value::String(n.clone())) => n.clone(),
            _ => return Vec::new(),
        };
        let arguments = match function.get("arguments") {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::String(s)) if !int(&Value::String(s.clone())) => s.clone(),
            Some(v) if exact => {
                let mut out = String::new();
                crate::pyjson::write_json_with(&mut out, v, &marked);
                out
            }
            Some(v) => crate::pyjson::dumps(v),
        };
        calls.push((name, arguments));
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refusals_are_vllms() {
        let tools = [json!({"type": "function", "function": {"name": "f"}})];
        let strict = [json!({"type": "function", "function": {"name": "f", "strict": true}})];
        let named = json!({"type": "function", "function": {"name": "f"}});
        let refuse = |t: &[Value], c: &Value, p| response_template_refusal(t, c, p).map(|r| r.1);
        assert_eq!(refuse(&tools, &json!("auto"), None), None);
        assert_eq!(refuse(&tools, &json!("auto"), Some(true)), None);
        assert_eq!(refuse(&[], &json!("required"), None), None);
        assert_eq!(refuse(&strict, &json!("none"), Some(false)), None);
        assert_eq!(refuse(&strict, &json!("auto"), Some(false)), Some("tools"));
        assert_eq!(
            refuse(&tools, &json!("required"), Some(false)),
            Some("tool_choice")
        );
        assert_eq!(refuse(&tools, &named, None), Some("tool_choice"));
        assert_eq!(
            refuse(&tools, &json!("auto"), Some(false)),
            Some("parallel_tool_calls")
        );
        let (message, _) = response_template_refusal(&tools, &named, None).unwrap_or_default();
        assert_eq!(
            message,
            "response_template parsing cannot guarantee named tool choice without a \
             format-compatible structural grammar"
        );
    }
}
