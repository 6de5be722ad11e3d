//! Responses derender **(ext)**: the chat derender's output as an OpenAI Responses object
//! and its stream events, as vLLM's `/v1/responses` builds them for a chat-template model
//! (vLLM 0.33, `entrypoints/openai/responses/serving.py`, `utils.py`
//! `build_response_output_items`, `streaming_events.py`). No peer has a Responses derender.
//!
//! Whole output: vLLM's `Response` object, its fields in vLLM's order, the request's settings
//! echoed (`instructions`, `tools`, `tool_choice`, `temperature`, …, with vLLM's defaults),
//! `status` `completed` or `incomplete` (`incomplete_details.reason: max_output_tokens` when
//! the engine stopped at its length), and `output` items in order: a `reasoning` item
//! (`rs_…`), a `message` item (`msg_…`, only when the content is not blank) and one
//! `function_call` item (`fc_…`, `call_id` the chat call's id) per call. Item ids are derived
//! from the response id and the item's position, so every replica names them alike.
//!
//! Stream: `response.created` and `response.in_progress` on the first chunk; per item
//! `response.output_item.added`, `response.content_part.added`, the deltas
//! (`response.reasoning_text.delta`, `response.output_text.delta`,
//! `response.function_call_arguments.delta`) and, when the next item starts or the output
//! ends, the `.done` events with the item's whole text; then `response.completed` (or
//! `response.incomplete`) with the whole response. Every event has a `sequence_number`
//! counting from 0. The `.done` events and the last one repeat the output, so a Responses
//! stream's state carries the output so far: O(output) bytes, unlike chat's O(1) (in the
//! sidecar the state stays in process).

use crate::model::GenerationConfig;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// A request setting a Response echoes, and vLLM's default for it.
type Echoed = (&'static str, fn() -> Value);

/// The request settings a Response echoes, in vLLM's order, with vLLM's defaults.
const ECHO: &[Echoed] = &[
    ("instructions", || Value::Null),
    ("metadata", || Value::Null),
];
const ECHO_AFTER_OUTPUT: &[Echoed] = &[
    ("parallel_tool_calls", || Value::Bool(true)),
    ("temperature", || json!(1.0)),
    ("tool_choice", || json!("auto")),
    ("tools", || json!([])),
    ("top_p", || json!(1.0)),
    ("background", || Value::Bool(false)),
];
const ECHO_TAIL: &[Echoed] = &[
    ("max_tool_calls", || Value::Null),
    ("previous_response_id", || Value::Null),
    ("prompt", || Value::Null),
    ("prompt_cache_options", || Value::Null),
    ("prompt_cache_key", || Value::Null),
    ("prompt_cache_retention", || Value::Null),
    ("reasoning", || Value::Null),
    ("safety_identifier", || Value::Null),
    ("service_tier", || json!("auto")),
];
const ECHO_END: &[Echoed] = &[
    ("text", || Value::Null),
    ("truncation", || json!("disabled")),
    ("user", || Value::Null),
    ("presence_penalty", || json!(0.0)),
    ("frequency_penalty", || json!(0.0)),
];

/// What a Response needs from its request: the echoed settings, and the resolved
/// `max_output_tokens` and `top_logprobs`. Taken once, at the first chunk of a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Echo {
    fields: Map<String, Value>,
    max_output_tokens: Value,
    top_logprobs: Value,
}

impl Echo {
    /// From the Responses request; `room` is the context left after the prompt, which caps
    /// `max_output_tokens` as vLLM's sampling `max_tokens` is capped. `temperature`,
    /// `top_p` and `max_output_tokens` are the sampling parameters' (vLLM's `from_request`
    /// reads them from `SamplingParams`): the request's, else the model's
    /// `generation_config.json` defaults, else 1.0; `top_p` 1.0 under greedy sampling.
    pub fn new(req: &Map<String, Value>, room: Option<u64>, generation: &GenerationConfig) -> Echo {
        let mut fields = Map::new();
        let all = ECHO.iter().chain(ECHO_AFTER_OUTPUT).chain(ECHO_TAIL);
        for (key, default) in all.chain(ECHO_END) {
            let v = req.get(*key).filter(|v| !v.is_null()).cloned();
            fields.insert((*key).into(), v.unwrap_or_else(default));
        }
        let asked = |k: &str| req.get(k).and_then(Value::as_f64);
        let temperature = asked("temperature")
            .or(generation.temperature)
            .unwrap_or(1.0);
        // vLLM's `_SAMPLING_EPS`: greedy sampling resets `top_p`.
        let top_p = match asked("top_p").or(generation.top_p).unwrap_or(1.0) {
            _ if temperature < 1e-5 => 1.0,
            p => p,
        };
        fields.insert("temperature".into(), json!(temperature));
        fields.insert("top_p".into(), json!(top_p));
        // No tools: `auto` is `none` (vLLM's `from_request`).
        let no_tools = fields
            .get("tools")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if no_tools && fields.get("tool_choice").is_some_and(|c| c == "auto") {
            fields.insert("tool_choice".into(), json!("none"));
        }
        let asked = req.get("max_output_tokens").and_then(Value::as_u64);
        let max_output_tokens = [asked, room, generation.max_new_tokens]
            .into_iter()
            .flatten()
            .min()
            .map_or(Value::Null, |n| json!(n));
        let wants_logprobs = req
            .get("include")
            .and_then(Value::as_array)
            .is_some_and(|i| i.iter().any(|v| v == "message.output_text.logprobs"));
        let top_logprobs = if wants_logprobs {
            json!(req.get("top_logprobs").and_then(Value::as_u64).unwrap_or(0))
        } else {
            Value::Null
        };
        Echo {
            fields,
            max_output_tokens,
            top_logprobs,
        }
    }

    /// The request's `top_logprobs` when it includes `message.output_text.logprobs`.
    fn logprobs_wanted(&self) -> Option<usize> {
        self.top_logprobs.as_u64().map(|n| n as usize)
    }

    /// Only the first of parallel calls is kept when the request turns them off.
    fn parallel(&self) -> bool {
        self.field("parallel_tool_calls") != Value::Bool(false)
    }

    /// An echoed setting (null if a state from another build lacks it).
    fn field(&self, key: &str) -> Value {
        self.fields.get(key).cloned().unwrap_or(Value::Null)
    }
}

/// The chat form's logprobs entries (`{"token", "logprob", "bytes", "top_logprobs"}`) as a
/// Response's output text carries them (`{"token", "bytes", "logprob", "top_logprobs":
/// [{"token", "bytes", "logprob"}]}`, vLLM's `_create_response_logprobs`), each entry's
/// alternatives cut to the request's `top_logprobs`.
fn output_logprobs(entries: &[Value], top: usize) -> Vec<Value> {
    let one =
        |e: &Value| json!({"token": e["token"], "bytes": e["bytes"], "logprob": e["logprob"]});
    entries
        .iter()
        .map(|e| {
            let mut out = one(e);
            let tops = e["top_logprobs"].as_array().map_or(&[][..], Vec::as_slice);
            out["top_logprobs"] = tops.iter().take(top).map(one).collect();
            out
        })
        .collect()
}

/// A text delta event's logprobs (`response_text_delta_event.Logprob`: no `bytes`).
fn delta_logprobs(entries: &[Value]) -> Value {
    let one = |e: &Value| json!({"token": e["token"], "logprob": e["logprob"]});
    entries
        .iter()
        .map(|e| {
            let mut out = one(e);
            let tops = e["top_logprobs"].as_array().map_or(&[][..], Vec::as_slice);
            out["top_logprobs"] = tops.iter().map(one).collect();
            out
        })
        .collect()
}

/// Token counts for `usage`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub input: usize,
    pub output: usize,
    pub reasoning: usize,
}

fn usage(c: Counts) -> Value {
    json!({
        "input_tokens": c.input,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0,
            "input_tokens_per_turn": [], "cached_tokens_per_turn": []},
        "output_tokens": c.output,
        "output_tokens_details": {"reasoning_tokens": c.reasoning, "tool_output_tokens": 0,
            "output_tokens_per_turn": [], "tool_output_tokens_per_turn": []},
        "total_tokens": c.input + c.output,
    })
}

/// The response's fixed parts.
pub struct Head<'a> {
    pub id: &'a str,
    pub created: u64,
    pub model: &'a str,
    pub echo: &'a Echo,
    pub kv_transfer_params: Value,
}

/// A Response object in vLLM's field order.
fn object(h: &Head, output: Vec<Value>, status: &str, usage: Value) -> Value {
    let mut o = Map::new();
    let e = h.echo;
    o.insert("id".into(), h.id.into());
    o.insert("created_at".into(), h.created.into());
    o.insert(
        "incomplete_details".into(),
        if status == "incomplete" {
            json!({"reason": "max_output_tokens"})
        } else {
            Value::Null
        },
    );
    for (k, _) in ECHO {
        o.insert((*k).into(), e.field(k));
    }
    o.insert("model".into(), h.model.into());
    o.insert("object".into(), "response".into());
    o.insert("output".into(), Value::Array(output));
    for (k, _) in ECHO_AFTER_OUTPUT {
        o.insert((*k).into(), e.field(k));
    }
    o.insert("max_output_tokens".into(), h.echo.max_output_tokens.clone());
    for (k, _) in ECHO_TAIL {
        o.insert((*k).into(), e.field(k));
    }
    o.insert("status".into(), status.into());
    o.insert("text".into(), e.field("text"));
    o.insert("top_logprobs".into(), h.echo.top_logprobs.clone());
    o.insert("truncation".into(), e.field("truncation"));
    o.insert("usage".into(), usage);
    for k in ["user", "presence_penalty", "frequency_penalty"] {
        o.insert(k.into(), e.field(k));
    }
    o.insert("kv_transfer_params".into(), h.kv_transfer_params.clone());
    for k in ["ec_transfer_params", "input_messages", "output_messages"] {
        o.insert(k.into(), Value::Null);
    }
    Value::Object(o)
}

/// An output item's id: `prefix_` + 24 hex digits of the response id and the item's place.
fn item_id(prefix: &str, response_id: &str, output_index: usize) -> String {
    let h = blake3::hash(format!("{response_id}/{output_index}").as_bytes());
    format!("{prefix}_{}", &h.to_hex()[..24])
}

fn reasoning_item(id: &str, text: Option<&str>, status: Value) -> Value {
    let content = text.map_or(
        Value::Null,
        |t| json!([{"text": t, "type": "reasoning_text"}]),
    );
    json!({"id": id, "summary": [], "type": "reasoning", "content": content,
        "encrypted_content": null, "status": status})
}

fn text_part(text: &str, logprobs: Value) -> Value {
    json!({"annotations": [], "text": text, "type": "output_text", "logprobs": logprobs})
}

fn message_item(id: &str, content: Vec<Value>, status: &str) -> Value {
    json!({"id": id, "content": content, "role": "assistant", "status": status,
        "type": "message", "phase": null})
}

fn call_item(id: &str, call_id: &str, name: &str, arguments: &str, status: &str) -> Value {
    json!({"arguments": arguments, "call_id": call_id, "name": name, "type": "function_call",
        "id": id, "async": null, "caller": null, "namespace": null, "status": status})
}

/// An item's or the response's status: `incomplete` when the engine stopped at its length.
fn status(incomplete: bool) -> &'static str {
    if incomplete {
        "incomplete"
    } else {
        "completed"
    }
}

fn text_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

/// A whole `chat.completion` (one choice) as a Response.
pub fn response(chat: &Value, head: &Head, counts: Counts) -> Value {
    let choice = &chat["choices"][0];
    let msg = &choice["message"];
    let length = choice["finish_reason"] == "length";
    let mut calls = msg["tool_calls"].as_array().map_or(&[][..], Vec::as_slice);
    if !head.echo.parallel() {
        calls = &calls[..calls.len().min(1)];
    }
    let mut output = Vec::new();
    let reasoning = text_of(msg.get("reasoning"));
    if !reasoning.is_empty() {
        let id = item_id("rs", head.id, output.len());
        output.push(reasoning_item(&id, Some(reasoning), Value::Null));
    }
    let content = text_of(msg.get("content"));
    if !content.trim().is_empty() {
        let status = status(length && calls.is_empty());
        let id = item_id("msg", head.id, output.len());
        // vLLM's one-shot puts every output token's logprobs (reasoning's too) on the
        // message's text.
        let logprobs = match head.echo.logprobs_wanted() {
            Some(top) => {
                let all = choice["logprobs"]["content"].as_array();
                all.map_or(Value::Null, |a| Value::Array(output_logprobs(a, top)))
            }
            None => Value::Null,
        };
        output.push(message_item(
            &id,
            vec![text_part(content, logprobs)],
            status,
        ));
    }
    for (i, call) in calls.iter().enumerate() {
        let f = &call["function"];
        let status = status(length && i + 1 == calls.len());
        let id = item_id("fc", head.id, output.len());
        output.push(call_item(
            &id,
            text_of(call.get("id")),
            text_of(f.get("name")),
            text_of(f.get("arguments")),
            status,
        ));
    }
    object(head, output, status(length), usage(counts))
}

/// The item a stream has open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Open {
    Reasoning,
    Message,
    Call {
        index: u64,
        call_id: String,
        name: String,
    },
}

/// A Responses stream between chunks: the response's fixed parts, the event counter, the
/// open item and its text so far, and the finished items.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponsesStream {
    pub id: String,
    pub created: u64,
    pub echo: Echo,
    seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open: Option<Open>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    items: Vec<Value>,
    /// The open message's logprobs so far (Responses form), when the request includes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    logprobs: Vec<Value>,
    /// Reasoning tokens so far, and the running count that gives them (vLLM's count of the
    /// reasoning parser in force, by token IDs; none under `hf`, whose count is its parser's).
    pub reasoning_tokens: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<llm_render_parsers::ReasoningCounter>,
}

impl ResponsesStream {
    pub fn new(id: String, created: u64, echo: Echo) -> Self {
        ResponsesStream {
            id,
            created,
            echo,
            ..Default::default()
        }
    }

    /// Appends `event` with its type and the next sequence number.
    fn push(&mut self, out: &mut Vec<Value>, kind: &str, mut event: Map<String, Value>) {
        event.insert("sequence_number".into(), self.seq.into());
        event.insert("type".into(), kind.into());
        self.seq += 1;
        out.push(Value::Object(event));
    }

    /// The next item's output index and id, for an item of kind `open`.
    fn at(&self, open: Option<&Open>) -> (usize, String) {
        let index = self.items.len();
        let prefix = match open {
            Some(Open::Reasoning) => "rs",
            Some(Open::Call { .. }) => "fc",
            _ => "msg",
        };
        (index, item_id(prefix, &self.id, index))
    }

    fn open(&mut self, out: &mut Vec<Value>, open: Open) {
        self.open = Some(open.clone());
        let (index, id) = self.at(Some(&open));
        let item = match &open {
            Open::Reasoning => reasoning_item(&id, None, "in_progress".into()),
            Open::Message => message_item(&id, Vec::new(), "in_progress"),
            Open::Call { call_id, name, .. } => call_item(&id, call_id, name, "", "in_progress"),
        };
        let added = json!({"item": item, "output_index": index});
        self.push(out, "response.output_item.added", obj(added));
        let part = match open {
            Open::Reasoning => json!({"text": "", "type": "reasoning_text"}),
            Open::Message => text_part("", json!([])),
            Open::Call { .. } => return,
        };
        let ev = json!({"content_index": 0, "item_id": id, "output_index": index, "part": part});
        self.push(out, "response.content_part.added", obj(ev));
    }

    fn delta(&mut self, out: &mut Vec<Value>, text: &str) {
        self.delta_with(out, text, &[]);
    }

    /// A delta whose chunk carried `logprobs` (Responses form; a message's only).
    fn delta_with(&mut self, out: &mut Vec<Value>, text: &str, logprobs: &[Value]) {
        self.text.push_str(text);
        let (index, id) = self.at(self.open.as_ref());
        let (kind, ev) = match self.open {
            Some(Open::Reasoning) => (
                "response.reasoning_text.delta",
                json!({"content_index": 0, "delta": text, "item_id": id, "output_index": index}),
            ),
            Some(Open::Message) => (
                "response.output_text.delta",
                json!({"content_index": 0, "delta": text, "item_id": id,
                    "logprobs": delta_logprobs(logprobs), "output_index": index}),
            ),
            _ => (
                "response.function_call_arguments.delta",
                json!({"delta": text, "item_id": id, "output_index": index}),
            ),
        };
        self.push(out, kind, obj(ev));
    }

    /// Closes the open item with its `.done` events; `incomplete` marks the output's last
    /// item when the engine stopped at its length.
    fn close(&mut self, out: &mut Vec<Value>, incomplete: bool) {
        let Some(open) = self.open.take() else {
            return;
        };
        let (index, id) = self.at(Some(&open));
        let text = std::mem::take(&mut self.text);
        let status = status(incomplete);
        let item = match open {
            Open::Reasoning => {
                let part = json!({"text": text, "type": "reasoning_text"});
                let done = json!({"content_index": 0, "item_id": id, "output_index": index,
                    "text": text});
                self.push(out, "response.reasoning_text.done", obj(done));
                let done = json!({"content_index": 0, "item_id": id, "output_index": index,
                    "part": part});
                self.push(out, "response.content_part.done", obj(done));
                reasoning_item(&id, Some(&text), "completed".into())
            }
            Open::Message => {
                let done = json!({"content_index": 0, "item_id": id, "logprobs": [],
                    "output_index": index, "text": text});
                self.push(out, "response.output_text.done", obj(done));
                // vLLM's done part: the deltas' logprobs, or null when there were none.
                let logprobs = std::mem::take(&mut self.logprobs);
                let logprobs = if logprobs.is_empty() {
                    Value::Null
                } else {
                    Value::Array(logprobs)
                };
                let part = text_part(&text, logprobs);
                let done = json!({"content_index": 0, "item_id": id, "output_index": index,
                    "part": part});
                self.push(out, "response.content_part.done", obj(done));
                message_item(&id, vec![part], status)
            }
            Open::Call { call_id, name, .. } => {
                let done = json!({"arguments": text, "item_id": id, "output_index": index});
                self.push(out, "response.function_call_arguments.done", obj(done));
                // vLLM's event has `name` too, after `type`.
                if let Some(Value::Object(last)) = out.last_mut() {
                    last.insert("name".into(), name.clone().into());
                }
                call_item(&id, &call_id, &name, &text, status)
            }
        };
        let done = json!({"item": item, "output_index": index});
        self.push(out, "response.output_item.done", obj(done));
        self.items.push(item);
    }

    fn head<'a>(&'a self, model: &'a str, kv_transfer_params: Value) -> Head<'a> {
        Head {
            id: &self.id,
            created: self.created,
            model,
            echo: &self.echo,
            kv_transfer_params,
        }
    }

    /// The events for one `chat.completion.chunk` of `model`, with the engine's
    /// `kv_transfer_params` and the token counts so far.
    pub fn events(&mut self, chunk: &Value, model: &str, kv: &Value, counts: Counts) -> Vec<Value> {
        let mut out = Vec::new();
        if self.seq == 0 {
            let r = object(
                &self.head(model, Value::Null),
                Vec::new(),
                "in_progress",
                Value::Null,
            );
            for kind in ["response.created", "response.in_progress"] {
                self.push(&mut out, kind, obj(json!({"response": r.clone()})));
            }
        }
        let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) else {
            return out;
        };
        let delta = &choice["delta"];
        let reasoning = text_of(delta.get("reasoning"));
        if !reasoning.is_empty() {
            if self.open != Some(Open::Reasoning) {
                self.close(&mut out, false);
                self.open(&mut out, Open::Reasoning);
            }
            self.delta(&mut out, reasoning);
        }
        let content = text_of(delta.get("content"));
        if !content.is_empty() {
            if self.open != Some(Open::Message) {
                self.close(&mut out, false);
                self.open(&mut out, Open::Message);
            }
            // vLLM's stream: a content delta carries its chunk's logprobs (all of its tokens).
            let logprobs = match self.echo.logprobs_wanted() {
                Some(top) => choice["logprobs"]["content"]
                    .as_array()
                    .map_or_else(Vec::new, |a| output_logprobs(a, top)),
                None => Vec::new(),
            };
            self.logprobs.extend(logprobs.iter().cloned());
            self.delta_with(&mut out, content, &logprobs);
        }
        for call in delta["tool_calls"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            let index = call["index"].as_u64().unwrap_or(0);
            if index > 0 && !self.echo.parallel() {
                continue;
            }
            let same = matches!(&self.open, Some(Open::Call { index: i, .. }) if *i == index);
            if !same {
                self.close(&mut out, false);
                let open = Open::Call {
                    index,
                    call_id: text_of(call.get("id")).to_string(),
                    name: text_of(call["function"].get("name")).to_string(),
                };
                self.open(&mut out, open);
            }
            let args = text_of(call["function"].get("arguments"));
            if !args.is_empty() {
                self.delta(&mut out, args);
            }
        }
        if let Some(finish) = choice["finish_reason"].as_str() {
            let length = finish == "length";
            self.close(&mut out, length);
            let status = status(length);
            let items = std::mem::take(&mut self.items);
            let r = object(&self.head(model, kv.clone()), items, status, usage(counts));
            let kind = if length {
                "response.incomplete"
            } else {
                "response.completed"
            };
            self.push(&mut out, kind, obj(json!({"response": r})));
        }
        out
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests;
