//! The Responses reshaper's unit tests: event order and numbering, items and status.
#![allow(clippy::unwrap_used)]
use super::*;

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[test]
fn a_stream_numbers_its_events_and_repeats_the_output_at_the_end() {
    let echo = Echo::new(&Map::new(), Some(100), &Default::default());
    let mut s = ResponsesStream::new("resp_1".into(), 7, echo);
    let c = Counts::default();
    let kv = Value::Null;
    let mut all = Vec::new();
    all.extend(s.events(&chunk(json!({"reasoning": "hm"}), Value::Null), "m", &kv, c));
    all.extend(s.events(&chunk(json!({"content": "Hi"}), Value::Null), "m", &kv, c));
    all.extend(s.events(
        &chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a",
            "function": {"name": "f", "arguments": "{}"}}]}),
            json!("stop"),
        ),
        "m",
        &kv,
        c,
    ));
    let kinds: Vec<&str> = all.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.reasoning_text.delta",
            "response.reasoning_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (i, e) in all.iter().enumerate() {
        assert_eq!(e["sequence_number"], i as u64);
    }
    let done = &all[all.len() - 1]["response"];
    assert_eq!(done["output"].as_array().unwrap().len(), 3);
    assert_eq!(done["output"][1]["content"][0]["text"], "Hi");
    assert_eq!(done["output"][2]["arguments"], "{}");
    assert_eq!(done["output"][2]["id"], all[14]["item"]["id"]);
    assert_eq!(done["tool_choice"], "none");
    assert_eq!(done["max_output_tokens"], 100);
}

#[test]
fn whole_response_items_and_status() {
    let echo = Echo::new(
        &json!({"max_output_tokens": 5})
            .as_object()
            .cloned()
            .unwrap(),
        Some(100),
        &Default::default(),
    );
    let head = Head {
        id: "resp_1",
        created: 7,
        model: "m",
        echo: &echo,
        kv_transfer_params: Value::Null,
    };
    let chat = json!({"choices": [{"message": {"content": "  ", "reasoning": "r",
        "tool_calls": []}, "finish_reason": "length"}]});
    let r = response(
        &chat,
        &head,
        Counts {
            input: 2,
            output: 5,
            reasoning: 1,
        },
    );
    assert_eq!(r["status"], "incomplete");
    assert_eq!(r["incomplete_details"]["reason"], "max_output_tokens");
    assert_eq!(
        r["output"].as_array().unwrap().len(),
        1,
        "blank content has no item"
    );
    assert_eq!(r["output"][0]["type"], "reasoning");
    assert_eq!(r["usage"]["total_tokens"], 7);
    assert_eq!(r["max_output_tokens"], 5);
}

/// With `include: ["message.output_text.logprobs"]`, a content delta carries its chunk's
/// logprobs in the delta event's form (no `bytes`), and the message's part at the end all of
/// them in the output form, alternatives cut to `top_logprobs` (vLLM's streaming events; the
/// same output from vLLM's own `/v1/responses` in `scripts/front_vs_vllm.py`).
#[test]
fn a_stream_carries_the_content_logprobs_it_was_asked_for() {
    let req = json!({"top_logprobs": 1, "include": ["message.output_text.logprobs"]});
    let echo = Echo::new(req.as_object().unwrap(), Some(100), &Default::default());
    let mut s = ResponsesStream::new("resp_1".into(), 7, echo);
    let (c, kv) = (Counts::default(), Value::Null);
    let entry = |t: &str| {
        json!({"token": t, "logprob": -1.0, "bytes": t.as_bytes(), "top_logprobs": [
            {"token": t, "logprob": -1.0, "bytes": t.as_bytes()},
            {"token": "z", "logprob": -2.0, "bytes": [122]}]})
    };
    let mut first = chunk(json!({"content": "a"}), Value::Null);
    first["choices"][0]["logprobs"] = json!({"content": [entry("a")]});
    let mut last = chunk(json!({"content": "b"}), json!("stop"));
    last["choices"][0]["logprobs"] = json!({"content": [entry("b")]});
    let mut all = s.events(&first, "m", &kv, c);
    all.extend(s.events(&last, "m", &kv, c));
    let deltas: Vec<&Value> = all
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .collect();
    assert_eq!(
        deltas[0]["logprobs"],
        json!([{"token": "a", "logprob": -1.0, "top_logprobs": [{"token": "a", "logprob": -1.0}]}])
    );
    let done = &all[all.len() - 1]["response"]["output"][0]["content"][0]["logprobs"];
    assert_eq!(
        done[1],
        json!({"token": "b", "bytes": [98], "logprob": -1.0,
               "top_logprobs": [{"token": "b", "bytes": [98], "logprob": -1.0}]})
    );
    // Not asked for: empty delta lists and a null part, as vLLM's.
    let echo = Echo::new(&Map::new(), Some(100), &Default::default());
    let mut s = ResponsesStream::new("resp_2".into(), 7, echo);
    let all = s.events(&last, "m", &kv, c);
    let delta = all
        .iter()
        .find(|e| e["type"] == "response.output_text.delta");
    assert_eq!(delta.unwrap()["logprobs"], json!([]));
    let part = &all[all.len() - 1]["response"]["output"][0]["content"][0];
    assert_eq!(part["logprobs"], Value::Null);
}
