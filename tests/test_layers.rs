//! The core crate's modules form a ladder (docs/design.md, "Modules of the core crate"): each
//! uses only the modules above it. This test reads the ladder from the design document and every
//! source file of the core crate, and fails on an import that runs back up it, naming the file,
//! the line and the module it reaches.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The core crate's top-level modules, top first, as the design document lists them.
fn ladder() -> Vec<String> {
    let design = std::fs::read_to_string(root().join("docs/design.md")).expect("docs/design.md");
    let section = design
        .split("## Modules of the core crate")
        .nth(1)
        .expect("the design document's section on the core crate's modules");
    let block = section
        .split("```")
        .nth(1)
        .expect("the ladder's code block");
    block
        .lines()
        .filter(|line| !line.starts_with(' '))
        .filter_map(|line| line.split_whitespace().next())
        .map(|name| {
            name.trim_end_matches(".rs")
                .trim_end_matches('/')
                .to_owned()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a line of code names through `crate::`, including those of a grouped
/// `use crate::{a, b::c}`.
fn named(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in line.match_indices("crate::") {
        let rest = &line[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or_default();
            for item in group.split(',') {
                let item = item.trim();
                let name: String = item
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn no_import_runs_back_up_the_ladder() {
    let ladder = ladder();
    assert!(ladder.len() >= 10, "the ladder was not read: {ladder:?}");
    let rank: HashMap<&str, usize> = ladder
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let src = root().join("crates/core/src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    let mut unlisted = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|name| name.trim_end_matches(".rs").to_owned())
            .expect("a module");
        if module == "lib" {
            continue;
        }
        let Some(&own) = rank.get(module.as_str()) else {
            unlisted.push(module);
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file");
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            // Comments and docs may point anywhere: only code is an arrow.
            if code.starts_with("//") {
                continue;
            }
            for target in named(code) {
                if let Some(&theirs) = rank.get(target.as_str())
                    && theirs > own
                {
                    wrong.push(format!(
                        "{}:{}: `{module}` uses `{target}`, which is below it",
                        relative.display(),
                        number + 1
                    ));
                }
            }
        }
    }
    unlisted.sort();
    unlisted.dedup();
    assert!(
        unlisted.is_empty(),
        "modules the ladder in docs/design.md does not list: {unlisted:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports that run back up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_grouped_import_names_each_module() {
    assert_eq!(
        named("use crate::{trim::fit, artifacts::ArtifactId};"),
        ["trim", "artifacts"]
    );
    assert_eq!(named("let x = crate::sync::lock(&m);"), ["sync"]);
}
