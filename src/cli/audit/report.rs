//! The audit's reports: one request's stages and links, or a traffic sample's percentiles
//! per link, as aligned tables or JSON.
//!
//! Percentiles are nearest-rank over the requests that cross a link (the encoder links
//! carry only requests with images). Bandwidth at `--rate R` is `R × share × bytes × 8`,
//! `share` the fraction of requests crossing the link: p50 / p99 as if every such request
//! had that size, mean from the sample's total. KV transfer time is the prefill → decode
//! bytes (whole blocks, as KV connectors move them) over `--link` Gb/s.

use super::links::Link;
use super::request::{Assumptions, Audit};
use super::units::{gbps, group, human, percentile, sig3, transfer_ms};
use super::Settings;
use serde_json::{json, Value};

/// Columns padded to their widest cell; column `c` left-aligned where `left[c]` is `l`,
/// right-aligned otherwise.
fn align(rows: &[Vec<String>], left: &str) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c] - cell.chars().count();
            if left.as_bytes().get(c) == Some(&b'l') {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn over(bytes: Option<u64>, limit: Option<u64>) -> bool {
    matches!((bytes, limit), (Some(b), Some(l)) if b > l)
}

/// One request: its stages, its links with their limits, its blocks. Also whether any
/// link was over its limit.
pub fn single(
    a: &Audit,
    s: &Settings,
    assume: &Assumptions,
    as_json: bool,
) -> anyhow::Result<(String, bool)> {
    let any_over = Link::ALL
        .iter()
        .any(|&l| a.crosses(l) && over(a.link(l), s.limits.of(l)));
    if as_json {
        let links: Vec<Value> = Link::ALL
            .iter()
            .filter(|&&l| a.crosses(l))
            .map(|&l| {
                let bytes = a.link(l);
                let mut v = json!({
                    "link": l.key(),
                    "bytes": bytes,
                    "limit": s.limits.of(l),
                    "over": over(bytes, s.limits.of(l)),
                });
                if let Some(rate) = s.rate {
                    v["gbps"] = json!(bytes.map(|b| gbps(b as f64, rate)));
                }
                if let (Link::PrefillDecode, Some(g)) = (l, s.link_gbps) {
                    v["transfer_ms"] = json!(bytes.map(|b| transfer_ms(b, g)));
                }
                v
            })
            .collect();
        let out = json!({
            "model": a.model,
            "tokens": a.tokens,
            "images": a.images,
            "hops": a.hops,
            "links": links,
            "blocks": a.blocks,
            "over_limit": any_over,
        });
        return Ok((serde_json::to_string_pretty(&out)? + "\n", any_over));
    }
    let mut text = format!(
        "{}: {} tokens",
        model_line(&a.model, assume),
        group(a.tokens as u64)
    );
    if a.images > 0 {
        text.push_str(&format!(", {} image{}", a.images, plural(a.images)));
    }
    text.push('\n');
    let stages: Vec<Vec<String>> = a
        .hops
        .iter()
        .map(|h| {
            let size = h.bytes.map_or_else(|| "?".into(), human);
            vec![h.hop.clone(), size, h.detail.clone()]
        })
        .collect();
    text.push_str(&align(&stages, "lrl"));
    text.push('\n');
    let mut header = vec![
        "link".to_string(),
        "bytes".into(),
        "limit".into(),
        "".into(),
    ];
    if let Some(rate) = s.rate {
        header.push(format!("Gb/s at {rate} req/s"));
    }
    if let Some(g) = s.link_gbps {
        header.push(format!("time at {g} Gb/s"));
    }
    let mut rows = vec![header];
    for l in Link::ALL.into_iter().filter(|&l| a.crosses(l)) {
        let bytes = a.link(l);
        let limit = s.limits.of(l);
        let mut row = vec![
            l.label().to_string(),
            bytes.map_or_else(|| "?".into(), human),
            limit.map_or_else(|| "-".into(), human),
            if over(bytes, limit) { "OVER" } else { "" }.into(),
        ];
        if let Some(rate) = s.rate {
            row.push(bytes.map_or_else(|| "?".into(), |b| sig3(gbps(b as f64, rate))));
        }
        if let Some(g) = s.link_gbps {
            row.push(match (l, bytes) {
                (Link::PrefillDecode, Some(b)) => format!("{} ms", sig3(transfer_ms(b, g))),
                _ => String::new(),
            });
        }
        rows.push(row);
    }
    text.push_str(&align(&rows, "lrrl"));
    let b = &a.blocks;
    text.push_str(&format!(
        "\nKV blocks: {} of {} tokens, {} full",
        group(b.blocks),
        b.block_size,
        group(b.full_blocks)
    ));
    if let (Some(ib), Some(seen)) = (b.index_block_size, b.index_visible_blocks) {
        text.push_str(&format!(
            "; a router index of {ib}-token blocks sees {} of them",
            group(seen)
        ));
    }
    text.push('\n');
    Ok((text, any_over))
}

/// The model's name, and where the shapes come from when `--config` names them.
fn model_line(model: &str, assume: &Assumptions) -> String {
    match &assume.config {
        Some((_, file)) => format!("{model} (shapes from {file})"),
        None => model.to_string(),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// p50 / p99 / max of some values.
#[derive(Debug, Clone, Copy)]
struct Spread {
    count: usize,
    p50: u64,
    p99: u64,
    max: u64,
    sum: u128,
}

impl Spread {
    fn of(mut values: Vec<u64>) -> Option<Spread> {
        values.sort_unstable();
        Some(Spread {
            count: values.len(),
            p50: percentile(&values, 50.0)?,
            p99: percentile(&values, 99.0)?,
            max: *values.last()?,
            sum: values.iter().map(|&v| u128::from(v)).sum(),
        })
    }

    fn json(&self) -> Value {
        json!({"p50": self.p50, "p99": self.p99, "max": self.max})
    }
}

struct LinkStats {
    link: Link,
    /// How many requests cross the link, sized or not.
    crossing: usize,
    /// Over the requests that cross the link and whose size is known.
    spread: Option<Spread>,
    over: usize,
}

/// A traffic sample's figures.
pub struct Sample<'a> {
    audited: usize,
    pub errors: Vec<String>,
    models: Vec<String>,
    tokens: Option<Spread>,
    blocks: Option<Spread>,
    index_visible: Option<Spread>,
    links: Vec<LinkStats>,
    settings: &'a Settings,
    assume: &'a Assumptions,
}

impl<'a> Sample<'a> {
    /// The figures of `audits`; `loaded` names the models when no request was audited.
    pub fn new(
        audits: &[Audit],
        errors: Vec<String>,
        loaded: &[String],
        settings: &'a Settings,
        assume: &'a Assumptions,
    ) -> Sample<'a> {
        let mut models: Vec<String> = audits.iter().map(|a| a.model.clone()).collect();
        if models.is_empty() {
            models = loaded.to_vec();
        }
        models.sort();
        models.dedup();
        let links = Link::ALL
            .into_iter()
            .map(|link| {
                let crossing: Vec<Option<u64>> = audits
                    .iter()
                    .filter(|a| a.crosses(link))
                    .map(|a| a.link(link))
                    .collect();
                let limit = settings.limits.of(link);
                LinkStats {
                    link,
                    crossing: crossing.len(),
                    over: crossing.iter().filter(|&&b| over(b, limit)).count(),
                    spread: Spread::of(crossing.into_iter().flatten().collect()),
                }
            })
            .collect();
        Sample {
            audited: audits.len(),
            errors,
            models,
            tokens: Spread::of(audits.iter().map(|a| a.tokens as u64).collect()),
            blocks: Spread::of(audits.iter().map(|a| a.blocks.blocks).collect()),
            index_visible: Spread::of(
                audits
                    .iter()
                    .filter_map(|a| a.blocks.index_visible_blocks)
                    .collect(),
            ),
            links,
            settings,
            assume,
        }
    }

    fn any_over(&self) -> bool {
        self.links.iter().any(|l| l.over > 0)
    }

    /// Bandwidth p50 / p99 / mean in Gb/s of a link at `rate`.
    fn bandwidth(&self, l: &LinkStats, rate: f64) -> Option<[f64; 3]> {
        let s = l.spread?;
        let share = s.count as f64 / self.audited.max(1) as f64;
        let mean = s.sum as f64 / self.audited.max(1) as f64;
        Some([
            gbps(s.p50 as f64, rate * share),
            gbps(s.p99 as f64, rate * share),
            gbps(mean, rate),
        ])
    }

    /// KV transfer time p50 / p99 / max in ms at `link` Gb/s.
    fn transfer(&self, link: f64) -> Option<[f64; 3]> {
        let s = self
            .links
            .iter()
            .find(|l| l.link == Link::PrefillDecode)?
            .spread?;
        Some([s.p50, s.p99, s.max].map(|b| transfer_ms(b, link)))
    }

    pub fn print(&self, as_json: bool) -> anyhow::Result<(String, bool)> {
        let text = if as_json {
            serde_json::to_string_pretty(&self.json())? + "\n"
        } else {
            self.table()
        };
        Ok((text, self.any_over()))
    }

    fn json(&self) -> Value {
        let s = self.settings;
        let spread = |x: &Option<Spread>| x.as_ref().map(Spread::json);
        let links: Vec<Value> = self
            .links
            .iter()
            .map(|l| {
                let mut v = json!({
                    "link": l.link.key(),
                    "requests": l.crossing,
                    "bytes": spread(&l.spread),
                    "limit": s.limits.of(l.link),
                    "over": l.over,
                });
                if let Some(rate) = s.rate {
                    v["gbps"] = json!(self
                        .bandwidth(l, rate)
                        .map(|[p50, p99, mean]| json!({"p50": p50, "p99": p99, "mean": mean})));
                }
                v
            })
            .collect();
        json!({
            "requests": self.audited + self.errors.len(),
            "audited": self.audited,
            "failed": self.errors.len(),
            "errors": self.errors,
            "models": self.models,
            "block_size": self.assume.block_size,
            "index_block_size": self.assume.index_block_size,
            "rate": s.rate,
            "link_gbps": s.link_gbps,
            "tokens": spread(&self.tokens),
            "blocks": spread(&self.blocks),
            "index_visible_blocks": spread(&self.index_visible),
            "links": links,
            "kv_transfer_ms": s.link_gbps.and_then(|g| self.transfer(g))
                .map(|[p50, p99, max]| json!({"p50": p50, "p99": p99, "max": max})),
            "over_limit": self.any_over(),
        })
    }

    fn table(&self) -> String {
        let s = self.settings;
        let mut text = format!(
            "{}: {} requests audited, {} failed\nlimits: {}\n\n",
            model_line(&self.models.join(", "), self.assume),
            group(self.audited as u64),
            group(self.errors.len() as u64),
            s.limits.describe()
        );
        let header = ["", "requests", "p50", "p99", "max", "over limit"];
        let mut rows = vec![header.map(String::from).to_vec()];
        let count_row = |name: String, x: &Option<Spread>| {
            let mut row = vec![name];
            match x {
                Some(x) => row.extend([x.count as u64, x.p50, x.p99, x.max].map(group)),
                None => row.extend(["0", "-", "-", "-"].map(String::from)),
            }
            row
        };
        rows.push(count_row("tokens".into(), &self.tokens));
        rows.push(count_row(
            format!("KV blocks of {}", self.assume.block_size),
            &self.blocks,
        ));
        if let Some(ib) = self.assume.index_block_size {
            rows.push(count_row(
                format!("  seen by a {ib}-token index"),
                &self.index_visible,
            ));
        }
        for l in &self.links {
            let mut row = vec![l.link.label().to_string(), group(l.crossing as u64)];
            match l.spread {
                Some(x) => row.extend([x.p50, x.p99, x.max].map(human)),
                None if l.crossing == 0 => row.extend(["-", "-", "-"].map(String::from)),
                None => row.extend(["?", "?", "?"].map(String::from)),
            }
            if let Some(limit) = s.limits.of(l.link) {
                row.push(format!("{} over {}", group(l.over as u64), human(limit)));
            }
            rows.push(row);
        }
        text.push_str(&align(&rows, "l"));
        if let Some(rate) = s.rate {
            text.push_str(&format!("\nbandwidth at {rate} requests/s\n"));
            let mut rows = vec![["", "p50 Gb/s", "p99 Gb/s", "mean Gb/s"]
                .map(String::from)
                .to_vec()];
            for l in &self.links {
                let mut row = vec![l.link.label().to_string()];
                match self.bandwidth(l, rate) {
                    Some(b) => row.extend(b.map(sig3)),
                    None => row.extend(["?", "?", "?"].map(String::from)),
                }
                rows.push(row);
            }
            text.push_str(&align(&rows, "l"));
        }
        if let Some(g) = s.link_gbps {
            text.push('\n');
            text.push_str(&match self.transfer(g) {
                Some(t) => {
                    let [p50, p99, max] = t.map(sig3);
                    format!("KV transfer at {g} Gb/s: p50 {p50} ms, p99 {p99} ms, max {max} ms\n")
                }
                None => format!("KV transfer at {g} Gb/s: unknown (no config.json shapes)\n"),
            });
        }
        text
    }
}
