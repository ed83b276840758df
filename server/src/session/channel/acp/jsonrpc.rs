//! JSON-RPC 2.0 framing of the lines duet writes to an ACP agent: a
//! request of duet's, and duet's answer to a request of the agent's.

use serde_json::{json, Value};

/// JSON-RPC's "method not found".
pub(super) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params".
pub(super) const INVALID_PARAMS: i64 = -32602;

pub(super) fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

pub(super) fn reply(id: &Value, result: Result<Value, (i64, String)>) -> String {
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    }
    .to_string()
}
