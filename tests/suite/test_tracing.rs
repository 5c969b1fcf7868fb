//! Each call runs in a `tool_call` span that ends up carrying its figures.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::artifacts::MemoryStore;
use toolsmith::{BudgetPolicy, Registry, ToolCall};
use toolsmith_workspace::Emit;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Fields = BTreeMap<String, String>;

/// Keeps the fields of every `tool_call` span, by span id.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Fields>>>);

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut spans = self.0.lock().unwrap();
        let mut fields = Fields::new();
        fields.insert("name".into(), attrs.metadata().name().into());
        attrs.record(&mut Collect(&mut fields));
        spans.push(fields);
        Id::from_u64(spans.len() as u64)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.lock().unwrap();
        let fields = &mut spans[span.into_u64() as usize - 1];
        values.record(&mut Collect(fields));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[tokio::test]
async fn each_call_has_a_span_with_its_figures() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    let registry = Registry::builder()
        .tool(Emit::default())
        .artifacts(MemoryStore::new())
        .budget(BudgetPolicy::default().with_batch_budget_chars(1_000))
        .build()
        .unwrap();
    let results = registry
        .turn()
        .execute([
            ToolCall::new("small", "emit", json!({ "lines": 2 })),
            ToolCall::new("big", "emit", json!({ "lines": 500 })),
        ])
        .await;
    let spans = spans.0.lock().unwrap();
    let calls: Vec<&Fields> = spans.iter().filter(|f| f["name"] == "tool_call").collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["call_id"], "small");
    assert_eq!(calls[0]["tool"], "emit");
    assert_eq!(calls[0]["allowance"], "500");
    assert_eq!(calls[0]["original_chars"], "14");
    assert_eq!(calls[0]["trimmed"], "false");
    assert!(!calls[0].contains_key("artifact"));
    assert_eq!(calls[1]["call_id"], "big");
    assert_eq!(calls[1]["trimmed"], "true");
    assert_eq!(calls[1]["is_error"], "false");
    let artifact = results[1].meta.artifact.as_ref().unwrap();
    assert_eq!(calls[1]["artifact"], artifact.as_str());
}
