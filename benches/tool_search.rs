//! The tool search: one query over 1,000 real-shaped tools (the catalog of
//! `tests/data/tool-catalog`, 161 tools of twelve public MCP servers, repeated under other server
//! names to 1,000), against a linear scan that only checks which tools contain a query word (the
//! least a search can do), and the index's construction.
//!
//! Run: `cargo bench --bench tool_search`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use toolsmith::search::{ToolIndex, ToolText};

/// `(server, name, description, schema)` of 1,000 tools.
fn tools() -> Vec<(String, String, String, Value)> {
    let catalog: Value =
        serde_json::from_str(include_str!("../tests/data/tool-catalog/servers.json")).unwrap();
    let mut tools = Vec::new();
    'fill: for copy in 0.. {
        for server in catalog["servers"].as_array().unwrap() {
            for tool in server["tools"].as_array().unwrap() {
                if tools.len() == 1_000 {
                    break 'fill;
                }
                tools.push((
                    format!("{}{copy}", server["server"].as_str().unwrap()),
                    tool["name"].as_str().unwrap().to_owned(),
                    tool["description"].as_str().unwrap_or_default().to_owned(),
                    tool["inputSchema"].clone(),
                ));
            }
        }
    }
    tools
}

fn texts(tools: &[(String, String, String, Value)]) -> impl Iterator<Item = ToolText<'_>> {
    tools.iter().map(|(server, name, description, schema)| {
        ToolText::new(name, description, schema).with_server(server)
    })
}

fn bench(c: &mut Criterion) {
    let tools = tools();
    let index = ToolIndex::new(texts(&tools));
    let query = "merge the pull request once its checks pass";
    let mut group = c.benchmark_group("tool_search_1000_tools");
    group.bench_function("search", |b| {
        b.iter(|| black_box(index.search(black_box(query), 5)))
    });
    // The least a search can do: look at every tool's text once for the query's words.
    let haystacks: Vec<String> = tools
        .iter()
        .map(|(server, name, description, _)| {
            format!("{server} {name} {description}").to_lowercase()
        })
        .collect();
    let words: Vec<&str> = query.split(' ').collect();
    group.bench_function("linear_word_scan", |b| {
        b.iter(|| {
            black_box(
                haystacks
                    .iter()
                    .filter(|text| words.iter().any(|word| text.contains(word)))
                    .count(),
            )
        })
    });
    group.bench_function("build_index", |b| {
        b.iter(|| black_box(ToolIndex::new(texts(&tools))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
