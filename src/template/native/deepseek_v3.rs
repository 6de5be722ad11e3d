//! DeepSeek-V3's chat template in Rust: the `chat_template` of DeepSeek-V3's
//! `tokenizer_config.json` (fixtures/models/deepseek_v3), statement for statement.
//!
//! What the template does, and what this file mirrors:
//! * `bos_token`, then every system message's content, joined with `"\n\n"`;
//! * user turns as `<｜User｜>`, assistant turns as `<｜Assistant｜>…<｜end▁of▁sentence｜>`;
//! * tool results as `<｜tool▁output▁begin｜>` blocks: only the very first one of the chat
//!   opens `<｜tool▁outputs▁begin｜>` (`ns.is_output_first` is never reset), and the assistant
//!   turn after a run of results opens with `<｜tool▁outputs▁end｜>` instead of
//!   `<｜Assistant｜>`;
//! * the generation prompt unless the chat ends in tool results.
//!
//! The template's `tool_calls` branch runs only for a `content` that is `none`, which
//! `template::messages` never passes (null content becomes `""`), so tool calls print nothing.
//! Inputs outside that shape answer `None` and render through minijinja (see the parent).

use super::{read_messages, NativeInput, Role};

/// Names the template binds or reads besides `messages` and `add_generation_prompt`: a
/// request kwarg with one of these names would shadow or set them, so such requests take the
/// general path.
const TEMPLATE_NAMES: [&str; 5] = ["namespace", "ns", "message", "tool", "bos_token"];

const USER: &str = "<｜User｜>";
const ASSISTANT: &str = "<｜Assistant｜>";
const END: &str = "<｜end▁of▁sentence｜>";

pub(super) fn render(input: &NativeInput<'_>) -> Option<String> {
    if input.kwargs_shadow(&TEMPLATE_NAMES) {
        return None;
    }
    let msgs = read_messages(input.messages)?;
    let size: usize = msgs.iter().map(|m| m.content.len() + 48).sum();
    let mut out = String::with_capacity(size + 64);

    out.push_str(input.bos_token.unwrap_or_default());
    let mut first_system = true;
    for m in msgs.iter().filter(|m| m.role == Role::System) {
        if !first_system {
            out.push_str("\n\n");
        }
        out.push_str(&m.content);
        first_system = false;
    }

    let (mut is_tool, mut is_output_first) = (false, true);
    for m in &msgs {
        match m.role {
            Role::User => {
                is_tool = false;
                out.push_str(USER);
                out.push_str(&m.content);
            }
            Role::Assistant => {
                out.push_str(if is_tool {
                    "<｜tool▁outputs▁end｜>"
                } else {
                    ASSISTANT
                });
                out.push_str(&m.content);
                out.push_str(END);
                is_tool = false;
            }
            Role::Tool => {
                is_tool = true;
                out.push_str(if is_output_first {
                    "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>"
                } else {
                    "\n<｜tool▁output▁begin｜>"
                });
                out.push_str(&m.content);
                out.push_str("<｜tool▁output▁end｜>");
                is_output_first = false;
            }
            Role::System => {}
        }
    }
    if is_tool {
        out.push_str("<｜tool▁outputs▁end｜>");
    }
    if input.add_generation_prompt && !is_tool {
        out.push_str(ASSISTANT);
    }
    Some(out)
}
