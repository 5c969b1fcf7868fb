//! What the three adapter examples share: a registry of the standard tools, and a model — the
//! provider's when `OPENAI_API_KEY` is set, else a scripted OpenAI-compatible model on loopback,
//! so that `cargo run --example …` works on a fresh machine with no key and no network.

use toolsmith::testing::{ScriptedModel, check_tool_loop, tool_loop_script};
use toolsmith::{BudgetPolicy, DirStore, Registry};

/// The file the scripted model's loop reads.
const NOTES: &str = "the release is on Thursday";
const BATCH_BUDGET: usize = 20_000;

/// A registry, and the model to point the client at.
pub(crate) struct Setup {
    pub(crate) registry: Registry,
    /// The OpenAI-compatible base URL (`…/v1`).
    pub(crate) base_url: String,
    pub(crate) api_key: String,
    pub(crate) model: String,
    pub(crate) prompt: String,
    /// The scripted model, when no key is set; its workspace.
    scripted: Option<(ScriptedModel, tempfile::TempDir)>,
}

impl Setup {
    /// The provider's model when `OPENAI_API_KEY` is set (`OPENAI_BASE_URL`, `OPENAI_MODEL`
    /// optional), over this repository; else the scripted model, over a scratch workspace.
    pub(crate) async fn new() -> Result<Self, Box<dyn std::error::Error>> {
        let budget = BudgetPolicy::new().with_batch_budget_chars(BATCH_BUDGET);
        if let Ok(api_key) = std::env::var("OPENAI_API_KEY") {
            let registry = toolsmith_std::register(Registry::builder())
                .state(toolsmith_std::Sandbox::new(env!("CARGO_MANIFEST_DIR"))?)
                .artifacts(DirStore::new_session()?)
                .budget(budget)
                .build()?;
            return Ok(Setup {
                registry,
                base_url: std::env::var("OPENAI_BASE_URL")
                    .unwrap_or_else(|_| "https://api.openai.com/v1".to_owned()),
                api_key,
                model: std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned()),
                prompt: "Which crate of this Rust workspace has the most lines of code? Use the \
                         tools; run `find crates -name '*.rs' | xargs wc -l` first."
                    .to_owned(),
                scripted: None,
            });
        }
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("notes.txt"), NOTES)?;
        let registry = toolsmith_std::register(Registry::builder())
            .state(toolsmith_std::Sandbox::new(dir.path())?)
            .artifacts(toolsmith::artifacts::MemoryStore::new())
            .budget(budget)
            .build()?;
        let model = ScriptedModel::start(tool_loop_script()).await?;
        println!(
            "(no OPENAI_API_KEY: the model is scripted, at {})",
            model.base_url()
        );
        Ok(Setup {
            registry,
            base_url: model.base_url(),
            api_key: "scripted".to_owned(),
            model: "gpt-4o-mini".to_owned(),
            prompt: "Run the test suite and tell me line 15,000.".to_owned(),
            scripted: Some((model, dir)),
        })
    }

    /// Prints the answer; with the scripted model, checks every request it received.
    pub(crate) fn finish(&self, answer: &str) -> Result<(), Box<dyn std::error::Error>> {
        println!("answer: {answer}");
        if let Some((model, _)) = &self.scripted {
            check_tool_loop(&model.requests(), BATCH_BUDGET, NOTES)?;
            println!(
                "checked: three results in call order within {BATCH_BUDGET} chars, the cut one \
                 naming its artifact, and the page read_artifact returned"
            );
        }
        Ok(())
    }
}
