//! The README's "Use it in your crate" section, taken at its word: its program is the `readme`
//! binary (the build script writes it out of the README), run here; and its `Cargo.toml` lines
//! with that program are a new crate of its own, checked, so that the way in cannot rot.
//!
//! The crate depends on this workspace by path (the README's `../toolsmith/` prefix points here)
//! and is checked offline, with this workspace's lock file, into this workspace's target
//! directory, under the workspace's profile settings (`.cargo/config.toml`), as
//! `scripts/package.sh` checks each published crate: in CI, what that check compiled of the
//! dependencies is this one's too (the crate's check 5 s of processor time; built on its own, as
//! it was before, its dependencies took 57 to 93). Its own resolution is what a user's build
//! compiles with (a feature the README's lines do not turn on is missing here too); the program
//! then runs as the workspace built it. Cargo holds the directory's lock while it builds, not
//! while the tests it built run, so the nested check does not wait on the `cargo test` that runs
//! it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The README section named `heading`, up to the next section of the same level.
fn section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("the README has no `{heading}` section"));
    let rest = &readme[start + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

/// The first fenced code block of `language` in `text`.
fn code_block<'a>(text: &'a str, language: &str) -> &'a str {
    let fence = format!("```{language}\n");
    let start = text
        .find(&fence)
        .unwrap_or_else(|| panic!("no ```{language} block in the section"))
        + fence.len();
    let end = text[start..].find("```").expect("an unclosed code block") + start;
    &text[start..end]
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's target directory (the parent of `target/tmp`).
fn readme_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf()
}
#[test]
fn the_readme_program_compiles_as_a_crate_of_its_own_and_runs() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let section = section(&readme, "## Use it in your crate\n");
    let dependencies = code_block(section, "toml");
    let main = code_block(section, "rust");
    assert!(
        dependencies.starts_with("[dependencies]\n"),
        "the toml block is the [dependencies] table:\n{dependencies}"
    );
    assert!(
        dependencies.contains("\"../toolsmith/crates/core\""),
        "the README names the path this test replaces:\n{dependencies}"
    );

    let dir = tempfile::tempdir().unwrap();
    let root = workspace_root();
    let manifest = format!(
        "[package]\nname = \"readme-agent\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
         publish = false\n\n[workspace]\n\n{}",
        dependencies.replace("../toolsmith/", &format!("{}/", root.display()))
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main).unwrap();
    // The workspace's versions, already downloaded: the check needs no network.
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let checked = Command::new(cargo)
        .args(["check", "--quiet", "--offline", "--config"])
        .arg(root.join(".cargo/config.toml"))
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", readme_target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        checked.status.success(),
        "the README's lines do not compile its program in a crate of its own ({}):\n{}",
        checked.status,
        String::from_utf8_lossy(&checked.stderr)
    );

    // The program, run where the crate is (it lists its directory), its artifacts in a
    // temporary directory of its own.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_readme"))
        .current_dir(dir.path())
        .env("TMPDIR", &tmp)
        .output()
        .expect("the README's program runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the README's program failed ({}):\n{stderr}\n{stdout}",
        output.status
    );

    // Seven standard tools, two of the README's own, and read_artifact.
    assert!(
        stdout.starts_with("10 tools offered to the model\n"),
        "{stdout}"
    );
    for line in [
        "toolu_01 count_words: 1 of ",
        "toolu_02 add: 2 of ",
        "toolu_03 list_directory: ",
    ] {
        assert!(stdout.contains(line), "no `{line}` in:\n{stdout}");
    }
    let json_start = stdout.find('{').expect("the tool_result message");
    let answer: serde_json::Value = serde_json::from_str(&stdout[json_start..]).expect(&stdout);
    assert_eq!(answer["role"], "user");
    let blocks = answer["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 3, "one result per call");
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_01", "toolu_02", "toolu_03"], "in call order");
    assert_eq!(blocks[0]["content"], "3");
    assert_eq!(blocks[1]["content"], "42");
    let listing = blocks[2]["content"].as_str().unwrap();
    assert!(
        listing.contains("Cargo.toml") && listing.contains("src"),
        "{listing}"
    );
    // The program's artifact store was its own, removed when it ended.
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn the_readme_names_every_crate_of_the_workspace_and_no_other() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let table = section(&readme, "## What is here\n");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members: Vec<&str> = manifest
        .lines()
        .find(|line| line.starts_with("members = ["))
        .expect("the workspace's members")
        .trim_start_matches("members = [")
        .trim_end_matches(']')
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .collect();
    let mut rows = 0;
    for member in &members {
        let package = std::fs::read_to_string(root.join(member).join("Cargo.toml")).unwrap();
        let name = package
            .lines()
            .find_map(|line| line.strip_prefix("name = "))
            .unwrap()
            .trim_matches('"');
        let row = format!("| `{name}` (`{member}`) |");
        assert!(
            table.contains(&row),
            "the README's table of crates has no row `{row}`"
        );
        rows += 1;
    }
    let listed = table.lines().filter(|line| line.starts_with("| `")).count();
    assert_eq!(
        listed, rows,
        "the README lists a crate the workspace does not have"
    );
}

#[test]
fn the_readme_says_every_step_ci_runs() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let development = section(&readme, "## Development\n");
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    // The scripts CI runs: on its command lines, not in what it echoes or names its phases.
    let scripts: Vec<&str> = ci
        .lines()
        .map(str::trim_start)
        .filter(|line| {
            !["echo", "#", "phase "]
                .iter()
                .any(|not| line.starts_with(not))
        })
        .flat_map(str::split_whitespace)
        .filter(|word| word.starts_with("scripts/"))
        .collect();
    assert!(scripts.len() >= 5, "{scripts:?}");
    for script in scripts {
        assert!(
            development.contains(script),
            "CI runs `{script}`, which the README's Development section does not name"
        );
    }
}
