//! The corpus of real tool outputs (`tests/corpus`, made by its `generate*.sh`): each output,
//! its name and the lines a developer must see in it. One reader for the tests, the keep bench
//! and the signal gate.

#![allow(dead_code)] // each user takes what it needs

use std::path::{Path, PathBuf};

/// The corpus's folder.
pub(crate) fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("tests/corpus").is_dir())
        .unwrap_or_else(|| Path::new("."))
        .join("tests/corpus")
}

/// One output of the corpus.
pub(crate) struct Output {
    /// Its name: the file's name without `.out`.
    pub(crate) name: String,
    /// What the tool printed.
    pub(crate) text: String,
    /// The lines of it a developer must see, one a line of `<name>.must`.
    pub(crate) must: Vec<String>,
}

impl Output {
    /// Whether the output is one JSON document (an object or an array).
    pub(crate) fn is_json(&self) -> bool {
        serde_json::from_str::<serde_json::Value>(&self.text)
            .is_ok_and(|value| value.is_object() || value.is_array())
    }
}

/// Every output of the corpus in `dir`, by name; an error names what could not be read.
pub(crate) fn read(dir: &Path) -> Result<Vec<Output>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the corpus {}: {e}", dir.display()))?;
    let mut outputs = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_none_or(|ext| ext != "out") {
            continue;
        }
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let must = std::fs::read_to_string(path.with_extension("must"))
            .map_err(|e| format!("{name} has no must-see lines ({name}.must): {e}"))?;
        outputs.push(Output {
            name,
            text,
            must: must.lines().map(str::to_owned).collect(),
        });
    }
    outputs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(outputs)
}

/// How many of `must` a shown text has as lines of its own.
pub(crate) fn shown(text: &str, must: &[String]) -> usize {
    must.iter()
        .filter(|line| text.lines().any(|shown| shown == line.as_str()))
        .count()
}
