//! Engine tests over the memory store: the whole conformance suite, so every use case and
//! error path of the spec and the decisions is exercised through the engine's public API.

use pharmapay_store_memory::MemoryStore;

async fn fresh_store() -> (MemoryStore, ()) {
    (MemoryStore::new(), ())
}

pharmapay_core::store_conformance_tests!(fresh_store);
