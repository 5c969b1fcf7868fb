//! The core crate's modules form a ladder (docs/design.md, "Modules of the core crate"): each
//! uses only the modules above it. This test reads the ladder from the design document and every
//! source file of the core crate, and fails on an import that runs back up it, naming the file,
//! the line and the module it reaches. And the crates' own layers: no workspace crate is built
//! a second time for the host.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The modules of one ladder, top first, as the design document lists them: the crate's
/// (`block` 0) or the `mcp` module's (`block` 1), the code blocks of the section on the core
/// crate's modules.
fn ladder(block: usize) -> Vec<String> {
    let design = std::fs::read_to_string(root().join("docs/design.md")).expect("docs/design.md");
    let section = design
        .split("## Modules of the core crate")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the design document's section on the core crate's modules");
    let block = section
        .split("```")
        .nth(1 + 2 * block)
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

/// The modules a line of code names through `prefix` (`crate::` for the crate's top-level
/// modules, `crate::mcp::` or `super::` for `mcp`'s), including those of a grouped
/// `use crate::{a, b::c}`.
fn named_after(line: &str, prefix: &str) -> Vec<String> {
    let word = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in line.match_indices(prefix) {
        let rest = &line[at + prefix.len()..];
        // `super::` inside a longer `super::super::` names nothing by itself.
        if prefix.starts_with("super::")
            && (line[..at].ends_with("super::") || rest.starts_with("super::"))
        {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or_default();
            for item in group.split(',') {
                let name = word(item.trim());
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name = word(rest);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

fn named(line: &str) -> Vec<String> {
    named_after(line, "crate::")
}

/// Every line of code (not a comment) of the files under `dir`, with the file's path relative
/// to `dir`.
fn code_lines(dir: &Path) -> Vec<(PathBuf, usize, String)> {
    let mut files = Vec::new();
    sources(dir, &mut files);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        let relative = file
            .strip_prefix(dir)
            .expect("under the directory")
            .to_owned();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            // Comments and docs may point anywhere: only code is an arrow.
            if !code.starts_with("//") {
                out.push((relative.clone(), number + 1, code.to_owned()));
            }
        }
    }
    out
}

/// Checks a ladder: `module_of` names the ladder's module a file belongs to (`None`: a file
/// outside it, such as the root that re-exports), `targets` the modules a line names.
fn check(
    ladder: &[String],
    dir: &Path,
    module_of: impl Fn(&Path) -> Option<String>,
    targets: impl Fn(&Path, &str) -> Vec<String>,
) {
    assert!(ladder.len() >= 8, "the ladder was not read: {ladder:?}");
    let rank: HashMap<&str, usize> = ladder
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let mut wrong = Vec::new();
    let mut unlisted = Vec::new();
    for (file, number, code) in code_lines(dir) {
        let Some(module) = module_of(&file) else {
            continue;
        };
        let Some(&own) = rank.get(module.as_str()) else {
            unlisted.push(module);
            continue;
        };
        for target in targets(&file, &code) {
            if let Some(&theirs) = rank.get(target.as_str())
                && theirs > own
            {
                wrong.push(format!(
                    "{}:{number}: `{module}` uses `{target}`, which is below it",
                    file.display(),
                ));
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

/// The first component of a path, without `.rs`.
fn first(path: &Path) -> Option<String> {
    path.components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .map(|name| name.trim_end_matches(".rs").to_owned())
}

#[test]
fn no_import_runs_back_up_the_ladder() {
    check(
        &ladder(0),
        &root().join("crates/core/src"),
        |file| first(file).filter(|module| module != "lib"),
        |_, code| named(code),
    );
}

#[test]
fn no_import_runs_back_up_the_ladder_inside_mcp() {
    check(
        &ladder(1),
        &root().join("crates/core/src/mcp"),
        |file| first(file).filter(|module| module != "mod"),
        |file, code| {
            // `super::` reaches `mcp` from its own files and a folder's `mod.rs`, and
            // `super::super::` from a folder's other files.
            let depth = match file.components().count() {
                1 => 1,
                _ if file.ends_with("mod.rs") => 1,
                _ => 2,
            };
            let mut names = named_after(code, "crate::mcp::");
            names.extend(named_after(code, &"super::".repeat(depth)));
            names
        },
    );
}

#[test]
fn a_grouped_import_names_each_module() {
    assert_eq!(
        named("use crate::{trim::fit, artifacts::ArtifactId};"),
        ["trim", "artifacts"]
    );
    assert_eq!(named("let x = crate::sync::lock(&m);"), ["sync"]);
    assert_eq!(
        named_after(
            "use super::super::{wire, child::Process};",
            "super::super::"
        ),
        ["wire", "child"]
    );
    assert!(named_after("use super::super::wire;", "super::").is_empty());
}

/// The code of a source file before its unit tests (which may write any message they like).
fn before_tests(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text)
}

#[test]
fn json_rpc_is_written_and_its_codes_named_only_in_wire() {
    let mcp = root().join("crates/core/src/mcp");
    let mut files = Vec::new();
    sources(&mcp, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&mcp).expect("under mcp").to_owned();
        if relative.starts_with("wire") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (number, line) in before_tests(&text).lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // A message built by hand, or a JSON-RPC error code written as a number.
            let by_hand = code.contains("\"jsonrpc\"") || code.contains(r#"\"jsonrpc\""#);
            let code_number = ["-32700", "-32600", "-32601", "-32602", "-32603", "-32_"]
                .iter()
                .any(|number| code.contains(number));
            if by_hand || code_number {
                wrong.push(format!("{}:{}: {code}", relative.display(), number + 1));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "JSON-RPC written outside `mcp/wire` (write it with `wire::answer`, \
         `wire::error_answer`, `wire::request`; name its codes there):\n{}",
        wrong.join("\n")
    );
}

/// A proc-macro's dependencies, dev-dependencies included, are built for the host, with the
/// host's features: a workspace crate among them is built (and checked by clippy) a second time,
/// with everything under it. The macros' compile-fail cases once had the core so: CI built it,
/// jsonschema and tokio twice, and the host's libc features kept aws-lc-sys's C build from being
/// shared with the packages' verify.
#[test]
fn no_proc_macro_builds_a_workspace_crate_for_the_host() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let members: Vec<&str> = packages
        .iter()
        .filter_map(|package| package["name"].as_str())
        .collect();
    let mut proc_macros = 0;
    for package in packages {
        let is_proc_macro = package["targets"].as_array().unwrap().iter().any(|target| {
            target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|kind| kind == "proc-macro")
        });
        if !is_proc_macro {
            continue;
        }
        proc_macros += 1;
        for dependency in package["dependencies"].as_array().unwrap() {
            let name = dependency["name"].as_str().unwrap();
            assert!(
                !members.contains(&name),
                "the proc-macro package {} depends on the workspace's {name} ({} dependency): \
                 it is built a second time, for the host; put what needs it in a package that \
                 is not a proc-macro (as the compile-fail cases are, in toolsmith-macros-ui)",
                package["name"],
                dependency["kind"].as_str().unwrap_or("normal"),
            );
        }
    }
    assert!(
        proc_macros > 0,
        "the workspace's macros are a proc-macro package"
    );
}
