//! The root package's integration tests, one binary: the registry with the standard tools and
//! the fixture tools of this package, history formats, shapes and must-see lines of real outputs (`tests/corpus`), the cap over
//! every path, the module ladder, the adapters' loops,
//! the README's claims. One binary links the workspace once, not once per area; each area is a
//! module (`cargo test --test suite test_trim::` runs one). The tests that measure this process's
//! memory (`test_artifact_memory`, `test_bucket_memory`, `test_history_alloc`, whose allocator is
//! counted) stay binaries of their own.

#[path = "../common/corpus.rs"]
mod corpus;
#[path = "../common/shapes.rs"]
mod shapes;

mod test_adapters;
mod test_approval;
mod test_artifacts;
mod test_budget;
mod test_cap;
mod test_history;
mod test_history_formats;
mod test_json_fit;
mod test_keep;
mod test_layers;
mod test_macros;
mod test_media;
mod test_overflow;
mod test_planning;
mod test_readme;
mod test_registry;
mod test_schema;
mod test_shapes;
mod test_store_contract;
mod test_streams;
mod test_tool_search;
mod test_tracing;
mod test_trim;
mod test_typed;
