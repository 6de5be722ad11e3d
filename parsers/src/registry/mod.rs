//! The parsers by vLLM's `--reasoning-parser` / `--tool-call-parser` names: one table each
//! ([`REASONING_PARSERS`], [`TOOL_PARSERS`]). The server's flag checks, its `--help`, `auto`
//! (by model name) and `/v1/models` all read these tables, so adding a family is one entry
//! in `registry/reasoning.rs` or `registry/tools.rs` plus its parser (a
//! [`Spec`](crate::tool) of an existing machine, or a file of its own with a variant of
//! [`AnyToolParser`]).

use crate::grammar::ToolGrammar;
use crate::tool::{
    CohereParser, DotsParser, ForcedCallParser, GemmaParser, HyV4Parser, InklingParser,
    K2HorizonParser, KimiK3Parser, MarkedParser, Minicpm5Parser, MinimaxM3Parser, MuseParser,
    Parsed, PythonicBlockParser, PythonicParser, Step3Parser, ToolParser, ToolSchemas, XmlParser,
};
use crate::{HarmonyParser, ResponseTemplateParser, TagReasoningParser};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod reasoning;
mod reasoning_count;
mod reasoning_shapes;
use reasoning_shapes::tags;
mod settings;
mod tools;

pub use reasoning::REASONING_PARSERS;
pub use reasoning_count::{harmony_counter, reasoning_counter, CountRule, ReasoningCounter, Vocab};
pub(crate) use settings::truthy;
pub use settings::ParserSettings;
pub use tools::TOOL_PARSERS;

/// One reasoning parser family.
pub struct ReasoningEntry {
    /// vLLM's `--reasoning-parser` name.
    pub name: &'static str,
    /// One line for `--help`: the models and the tags.
    pub help: &'static str,
    /// Lower-case substrings of a model name that pick this family for `auto`.
    pub model_patterns: &'static [&'static str],
    /// Its tag parser for one request, built from the request's settings as vLLM's
    /// constructor reads them (most families read none); `None` for gpt-oss's
    /// `openai_gptoss`, whose reasoning the Harmony parser reads (with the calls, as vLLM runs
    /// both as one parser for gpt-oss), and where vLLM's constructor refuses the settings.
    pub make: fn(&ParserSettings) -> Option<TagReasoningParser>,
    /// vLLM's parser sets `skip_special_tokens: false` on every request (its parser-engine
    /// adapters' `adjust_request`).
    pub keeps_special_tokens: bool,
}

/// One tool-call parser family.
pub struct ToolEntry {
    /// vLLM's `--tool-call-parser` name.
    pub name: &'static str,
    /// One line for `--help`: the models and the wire format.
    pub help: &'static str,
    /// Lower-case substrings of a model name that pick this family for `auto`.
    pub model_patterns: &'static [&'static str],
    /// A parser for one request, given its tools' schemas (the XML families type values by
    /// them) and its settings (the model's, for the families that read its tokenizer: hy_v3
    /// and hy_v4's token suffix).
    pub make: fn(Arc<ToolSchemas>, &ParserSettings) -> AnyToolParser,
    /// vLLM's parser sets `skip_special_tokens: false` on requests with tools and a
    /// `tool_choice` other than `none` (its `adjust_request`: hermes, kimi_k2 and the
    /// parser-engine adapters).
    pub keeps_special_tokens: bool,
    /// How vLLM constrains the engine's output for `tool_choice` `required`, a named tool,
    /// or `auto` with strict tools or `parallel_tool_calls: false`.
    pub grammar: ToolGrammar,
}

/// gpt-oss's parser names (vLLM's `--reasoning-parser openai_gptoss`,
/// `--tool-call-parser openai`); for a Harmony model either one runs [`HarmonyParser`].
pub const HARMONY_REASONING: &str = "openai_gptoss";
pub const HARMONY_TOOLS: &str = "openai";

/// vLLM's name of the parser driven by a checkpoint's `response_template` metadata, as both
/// `--reasoning-parser` and `--tool-call-parser`. Its entries in the two tables carry the name;
/// the parser (one for both, as vLLM runs it) is built by [`response_template_parser`] (or
/// [`tool_parser_with`] for the tool parser alone) from the template in
/// [`ParserSettings::response_template`].
pub const RESPONSE_TEMPLATE: &str = "hf";

/// vLLM's `beam` (`vllm/parser/beam.py`): [`RESPONSE_TEMPLATE`]'s parser under its own name,
/// which also constrains every chat request with a structural tag derived from the template
/// ([`crate::BeamTemplate`], applied by the render). Never combined with `hf` (vLLM's
/// `_compose_parser`: they stand for different unified parsers).
pub const BEAM: &str = "beam";

/// Whether `name` is one of the parsers driven by the checkpoint's `response_template`
/// (`hf`, `beam`): one parser reads reasoning and calls, built from the model's template.
pub fn is_response_template(name: &str) -> bool {
    name == RESPONSE_TEMPLATE || name == BEAM
}

/// The entry `model` names: the one whose name it is, else the first, in table order, one of
/// whose patterns the lower-cased model name holds.
fn for_model<'a, E>(
    entries: &'a [E],
    model: &str,
    name: impl Fn(&E) -> &'static str,
    patterns: impl Fn(&E) -> &'static [&'static str],
) -> Option<&'a E> {
    let m = model.to_ascii_lowercase();
    // An entry's own name first: `llama4_json` holds llama4_pythonic's pattern `llama4`.
    entries.iter().find(|e| name(e) == m).or_else(|| {
        entries
            .iter()
            .find(|e| patterns(e).iter().any(|p| m.contains(p)))
    })
}

/// The reasoning family `auto` picks for a model name.
pub fn reasoning_parser_for_model(model: &str) -> Option<&'static ReasoningEntry> {
    for_model(REASONING_PARSERS, model, |e| e.name, |e| e.model_patterns)
}

/// The tool-call family `auto` picks for a model name.
pub fn tool_parser_for_model(model: &str) -> Option<&'static ToolEntry> {
    for_model(TOOL_PARSERS, model, |e| e.name, |e| e.model_patterns)
}

/// Whether vLLM's parsers set `skip_special_tokens: false` on a request: the reasoning
/// parser always, the tool parser when the request has tools and a `tool_choice` other
/// than `none` (`uses_tools`).
pub fn keeps_special_tokens(
    reasoning: Option<&ReasoningEntry>,
    tools: Option<&ToolEntry>,
    uses_tools: bool,
) -> bool {
    reasoning.is_some_and(|r| r.keeps_special_tokens)
        || (uses_tools && tools.is_some_and(|t| t.keeps_special_tokens))
}

/// A reasoning parser by name (any case), by a model name as `auto` reads one, or
/// `tags:<start>,<end>` for any tag pair, built for a request with no settings (each
/// family's default mode); `None` when nothing matches.
pub fn reasoning_parser(name: &str) -> Option<TagReasoningParser> {
    reasoning_parser_with(name, &ParserSettings::default())
}

/// [`reasoning_parser`] for one request: the family's constructor reads the request's
/// settings, as vLLM's does (the one way the server builds a reasoning parser).
pub fn reasoning_parser_with(name: &str, settings: &ParserSettings) -> Option<TagReasoningParser> {
    if let Some(pair) = name.strip_prefix("tags:") {
        let (start, end) = pair.split_once(',')?;
        return Some(tags(start, end, false));
    }
    reasoning_parser_for_model(name).and_then(|e| (e.make)(settings))
}

/// Why vLLM's constructor of the reasoning parser a server runs for `model` (its
/// `--reasoning-parser` `setting`: a name, `auto` or `none`) refuses a request's settings,
/// which vLLM answers with a 400: K2 Horizon's `reasoning_effort` other than high, medium
/// or low. `None` when it accepts them.
pub fn refused_settings(setting: &str, model: &str, settings: &ParserSettings) -> Option<String> {
    let name = match setting {
        "none" => return None,
        "auto" => model,
        name => name,
    };
    match reasoning_parser_for_model(name)?.name {
        "k2_horizon" => reasoning::k2_horizon_effort(settings).err(),
        _ => None,
    }
}

/// A tool parser by vLLM name; `None` for an unknown name, and for `hf`, which needs the
/// model's template ([`tool_parser_with`]).
pub fn tool_parser(name: &str, schemas: Arc<ToolSchemas>) -> Option<AnyToolParser> {
    tool_parser_with(name, schemas, &ParserSettings::default())
        .ok()
        .flatten()
}

/// [`tool_parser`] for one request: `hf` is built from the model's template and the request's
/// prompt in `settings` (the tool parser alone: thinking is content), and fails with vLLM's
/// startup error where the template is missing or is one llm-render does not run.
pub fn tool_parser_with(
    name: &str,
    schemas: Arc<ToolSchemas>,
    settings: &ParserSettings,
) -> Result<Option<AnyToolParser>, String> {
    if is_response_template(name) {
        let p = response_template_parser(settings, schemas, false, true)?;
        return Ok(Some(AnyToolParser::ResponseTemplate(p)));
    }
    Ok(TOOL_PARSERS
        .iter()
        .find(|e| e.name == name)
        .map(|e| (e.make)(schemas, settings)))
}

/// The `hf` parser for one request, reading `reasoning` (`--reasoning-parser hf`) and calls
/// (`calls`: `--tool-call-parser hf` and a request that asks for them), from the template and
/// prompt in `settings`. The error is vLLM's startup error: no template, a template vLLM
/// refuses, one without the field a parser needs, or one llm-render does not run.
pub fn response_template_parser(
    settings: &ParserSettings,
    schemas: Arc<ToolSchemas>,
    reasoning: bool,
    calls: bool,
) -> Result<ResponseTemplateParser, String> {
    let template = settings.response_template.as_deref().ok_or(
        "The hf parser requires `response_template` metadata in the tokenizer configuration",
    )?;
    if reasoning && !template.has_thinking() {
        return Err(
            "--reasoning-parser hf requires a response_template with a thinking field".into(),
        );
    }
    if calls && !template.has_tool_calls() {
        return Err(
            "--tool-call-parser hf requires a response_template with a tool_calls field".into(),
        );
    }
    Ok(ResponseTemplateParser::new(
        template.clone(),
        &settings.prompt,
        schemas,
        reasoning,
        calls,
    ))
}

/// Any tool parser, as one serializable type (the stream state carries it): one variant per
/// state machine, whatever the families it reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnyToolParser {
    Marked(MarkedParser),
    Xml(XmlParser),
    Pythonic(PythonicParser),
    PythonicBlock(PythonicBlockParser),
    HyV4(HyV4Parser),
    KimiK3(KimiK3Parser),
    K2Horizon(K2HorizonParser),
    Step3(Step3Parser),
    Dots(DotsParser),
    Cohere(CohereParser),
    Gemma(GemmaParser),
    MinimaxM3(MinimaxM3Parser),
    Minicpm5(Minicpm5Parser),
    Muse(MuseParser),
    Inkling(InklingParser),
    Harmony(HarmonyParser),
    /// `hf`: the checkpoint's `response_template`.
    ResponseTemplate(ResponseTemplateParser),
    /// A `tool_choice` JSON schema's output (named or `required`), in place of the family's.
    Forced(ForcedCallParser),
}

impl AnyToolParser {
    /// Whether the parser types values by the request's tool schemas (the XML families).
    pub fn uses_schemas(&self) -> bool {
        matches!(
            self,
            AnyToolParser::Xml(_)
                | AnyToolParser::HyV4(_)
                | AnyToolParser::K2Horizon(_)
                | AnyToolParser::Step3(_)
                | AnyToolParser::Dots(_)
                | AnyToolParser::Gemma(_)
                | AnyToolParser::MinimaxM3(_)
                | AnyToolParser::Minicpm5(_)
                | AnyToolParser::Muse(_)
                | AnyToolParser::ResponseTemplate(_)
        )
    }

    /// Gives a parser restored from a stream state its request's tool schemas.
    pub fn set_schemas(&mut self, schemas: Arc<ToolSchemas>) {
        match self {
            AnyToolParser::Xml(p) => p.set_schemas(schemas),
            AnyToolParser::HyV4(p) => p.set_schemas(schemas),
            AnyToolParser::K2Horizon(p) => p.set_schemas(schemas),
            AnyToolParser::Step3(p) => p.set_schemas(schemas),
            AnyToolParser::Dots(p) => p.set_schemas(schemas),
            AnyToolParser::Gemma(p) => p.set_schemas(schemas),
            AnyToolParser::MinimaxM3(p) => p.set_schemas(schemas),
            AnyToolParser::Minicpm5(p) => p.set_schemas(schemas),
            AnyToolParser::Muse(p) => p.set_schemas(schemas),
            AnyToolParser::ResponseTemplate(p) => p.set_schemas(schemas),
            _ => {}
        }
    }
}

impl ToolParser for AnyToolParser {
    fn push(&mut self, text: &str, out: &mut Parsed) {
        match self {
            AnyToolParser::Marked(p) => p.push(text, out),
            AnyToolParser::Xml(p) => p.push(text, out),
            AnyToolParser::Pythonic(p) => p.push(text, out),
            AnyToolParser::PythonicBlock(p) => p.push(text, out),
            AnyToolParser::HyV4(p) => p.push(text, out),
            AnyToolParser::KimiK3(p) => p.push(text, out),
            AnyToolParser::K2Horizon(p) => p.push(text, out),
            AnyToolParser::Step3(p) => p.push(text, out),
            AnyToolParser::Dots(p) => p.push(text, out),
            AnyToolParser::Cohere(p) => p.push(text, out),
            AnyToolParser::Gemma(p) => p.push(text, out),
            AnyToolParser::MinimaxM3(p) => p.push(text, out),
            AnyToolParser::Minicpm5(p) => p.push(text, out),
            AnyToolParser::Muse(p) => p.push(text, out),
            AnyToolParser::Inkling(p) => p.push(text, out),
            AnyToolParser::Forced(p) => p.push(text, out),
            AnyToolParser::ResponseTemplate(p) => ToolParser::push(p, text, out),
            // As a tool parser alone, analysis is dropped (vLLM without a reasoning parser).
            AnyToolParser::Harmony(p) => p.push(text, &mut String::new(), out),
        }
    }

    fn finish(&mut self, out: &mut Parsed) {
        match self {
            AnyToolParser::Marked(p) => p.finish(out),
            AnyToolParser::Xml(p) => p.finish(out),
            AnyToolParser::Pythonic(p) => p.finish(out),
            AnyToolParser::PythonicBlock(p) => p.finish(out),
            AnyToolParser::HyV4(p) => p.finish(out),
            AnyToolParser::KimiK3(p) => p.finish(out),
            AnyToolParser::K2Horizon(p) => p.finish(out),
            AnyToolParser::Step3(p) => p.finish(out),
            AnyToolParser::Dots(p) => p.finish(out),
            AnyToolParser::Cohere(p) => p.finish(out),
            AnyToolParser::Gemma(p) => p.finish(out),
            AnyToolParser::MinimaxM3(p) => p.finish(out),
            AnyToolParser::Minicpm5(p) => p.finish(out),
            AnyToolParser::Muse(p) => p.finish(out),
            AnyToolParser::Inkling(p) => p.finish(out),
            AnyToolParser::Forced(p) => p.finish(out),
            AnyToolParser::ResponseTemplate(p) => ToolParser::finish(p, out),
            AnyToolParser::Harmony(p) => p.finish(&mut String::new(), out),
        }
    }
}
