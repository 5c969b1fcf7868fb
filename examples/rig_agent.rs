//! A rig agent whose tool calls run as toolsmith turns: rig-agent's `AgentRun` driven by
//! `toolsmith_rig::Driver`, the model rig's OpenAI provider.
//!
//! With no `OPENAI_API_KEY` the model is scripted (on loopback): it asks for three calls in one
//! message — a megabyte of output, a failure, a read — pages the cut output with
//! `read_artifact`, and answers. With a key, it is the provider's model over this repository.
//!
//! Run: `cargo run --example rig_agent`

mod common;

use rig_agent::run::AgentRun;
use rig_core::providers::openai::OpenAIConfig;
use toolsmith_rig::Driver;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let setup = common::Setup::new().await?;
    let model = OpenAIConfig::new(setup.api_key.clone())
        .with_base_url(setup.base_url.clone())
        .client()
        .chat(setup.model.clone());
    let driver = Driver::new(setup.registry.clone());
    let response = driver
        .run(model, AgentRun::new(setup.prompt.clone()).max_turns(10))
        .await?;
    setup.finish(&response.output())
}
