//! Pages of lists: where a page ends (by count and by memory), cursors, and
//! the 2026-07-28 caching hints.

use super::*;

/// Host memory one `tools/list` page may take for its tools: a page ends
/// early, with a cursor, where the next tool would pass it (a page always has
/// at least one tool). Tool definitions are large once their schemas are
/// copied as JSON values, and several lists may be answered at once.
const MAX_PAGE_BYTES: usize = 16 << 20;

/// Where the page starting at `start` ends: after `page_size` items, or
/// before the item that would take it past [`MAX_PAGE_BYTES`] (each
/// holding `held_bytes`).
fn page_end<T>(
    items: &[T],
    start: usize,
    page_size: usize,
    held_bytes: impl Fn(&T) -> usize,
) -> usize {
    let mut held = 0usize;
    let mut end = start;
    for item in items[start..].iter().take(page_size) {
        held = held.saturating_add(held_bytes(item));
        if held > MAX_PAGE_BYTES && end > start {
            break;
        }
        end += 1;
    }
    end
}

/// The page of `items` that `params`' cursor asks for, as a list result
/// whose array is `key` (`tools`, `resources`, ...): at most `page_size`
/// items and [`MAX_PAGE_BYTES`] of them (each holding `held_bytes`), each
/// shaped by `shape`, and `nextCursor` when more follow.
pub(super) fn list_page<T>(
    items: &[T],
    params: &Map<String, Value>,
    key: &str,
    page_size: usize,
    held_bytes: impl Fn(&T) -> usize,
    shape: impl Fn(&T) -> Value,
) -> Result<Value, RpcError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => decode_cursor(cursor)
            .filter(|&offset| offset <= items.len())
            .ok_or_else(|| RpcError::invalid_params(format!("Invalid cursor: {cursor}")))?,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "Invalid params: `cursor` must be a string",
            ));
        }
    };
    let end = page_end(items, start, page_size.max(1), held_bytes);
    let page: Vec<Value> = items[start..end].iter().map(shape).collect();
    let mut result = Map::new();
    result.insert(key.into(), page.into());
    if end < items.len() {
        result.insert("nextCursor".into(), encode_cursor(end).into());
    }
    Ok(Value::Object(result))
}

/// `result` as a 2026-07-28 `CacheableResult`: fresh for `ttl_ms`, shared
/// as `scope` says.
pub(super) fn cacheable(mut result: Value, ttl_ms: u64, scope: &str) -> Value {
    result["ttlMs"] = ttl_ms.into();
    result["cacheScope"] = scope.into();
    result
}

fn encode_cursor(offset: usize) -> String {
    CURSOR.encode(format!("offset:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = CURSOR.decode(cursor).ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix("offset:")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_tool::ToolDef;

    fn tool(held_bytes: usize) -> ToolDef {
        ToolDef {
            name: "t".into(),
            title: None,
            description: None,
            input_schema: json!({ "type": "object" }),
            output_schema: None,
            annotations: None,
            icons: vec![],
            task_support: None,
            task: Default::default(),
            held_bytes,
        }
    }

    fn held(tool: &ToolDef) -> usize {
        tool.held_bytes
    }

    #[test]
    fn a_page_ends_at_its_size_or_its_memory_budget_with_at_least_one_tool() {
        let small: Vec<_> = (0..10).map(|_| tool(1)).collect();
        assert_eq!(page_end(&small, 0, 4, held), 4);
        assert_eq!(page_end(&small, 8, 4, held), 10);
        let large: Vec<_> = (0..10).map(|_| tool(MAX_PAGE_BYTES / 3)).collect();
        assert_eq!(page_end(&large, 0, 500, held), 3);
        assert_eq!(page_end(&large, 9, 500, held), 10);
        let huge: Vec<_> = (0..2).map(|_| tool(MAX_PAGE_BYTES * 2)).collect();
        assert_eq!(page_end(&huge, 0, 500, held), 1);
    }
}
