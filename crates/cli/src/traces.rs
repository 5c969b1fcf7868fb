//! What the process logs, and the spans it exports: warnings (a server of a proxy that could not
//! start, a listing cut short) go to stderr, where MCP clients keep a server's log; with an OTLP
//! endpoint in the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), toolsmith's spans — one per relayed call, with its
//! server, tool, chars before and after, and artifacts — are exported to it over OTLP/HTTP
//! (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` by default, or `http/json`). Off unless
//! configured.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Sets the process's subscriber up; the span exporter, when an endpoint is configured.
pub(crate) fn start() -> Option<SdkTracerProvider> {
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .with_filter(LevelFilter::WARN);
    let provider = provider();
    let spans = provider.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("toolsmith"))
            .with_filter(Targets::new().with_target("toolsmith", tracing::Level::INFO))
    });
    tracing_subscriber::registry().with(log).with(spans).init();
    provider
}

/// Exports what is left, waiting for the endpoint (as the exporter's timeout allows).
pub(crate) fn stop(provider: Option<SdkTracerProvider>) {
    if let Some(provider) = provider
        && let Err(error) = provider.shutdown()
    {
        eprintln!("toolsmith: warning: the last spans could not be exported ({error})");
    }
}

fn provider() -> Option<SdkTracerProvider> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return None;
    }
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
    {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!(
                "toolsmith: warning: spans are not exported: the OTLP exporter could not be \
                 set up from OTEL_EXPORTER_OTLP_* ({error})"
            );
            return None;
        }
    };
    let mut resource = Resource::builder();
    if !set("OTEL_SERVICE_NAME") {
        resource = resource.with_service_name("toolsmith");
    }
    Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build(),
    )
}
