//! A schema as a graph of subschemas, for bounding what validating against it costs.
//!
//! The validator walks a schema and a value together; its work is the number
//! of (subschema, value) pairs it visits. `$ref` makes a schema a graph, and
//! a graph whose references fan out (`d0: allOf [d1, d1]`, `d1: allOf [d2,
//! d2]`, ...) visits exponentially many pairs: a 1 KB schema can cost
//! gigabytes and minutes for one value. The graph is built once, when a tool
//! is loaded: shapes that can never be validated cheaply are refused then,
//! and each value's cost is counted on the graph, against a budget, before
//! the validator runs.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

/// Most subschemas one schema may expand to, each `$ref` expanded where it
/// is used (recursion counted once). Real schemas stay in the hundreds.
pub const MAX_EXPANSION: u64 = 100_000;

/// Most references and combinators chained on one value without descending
/// into it (`$ref` to an `allOf` to a `$ref`...). Real schemas use a few.
pub const MAX_IN_PLACE_DEPTH: u32 = 32;

/// Bytes of a string that cost one unit per `pattern` or `format` check.
const STRING_BYTES_PER_UNIT: usize = 16;

/// Bytes of an `enum` or `const` that cost one unit per comparison.
const COMPARED_BYTES_PER_UNIT: usize = 32;

type NodeId = u32;

/// The root schema's node.
const ROOT: NodeId = 0;

/// One subschema and what it applies to what.
#[derive(Debug, Default)]
struct Node {
    /// Where it is, as a JSON pointer into the schema (for messages).
    pointer: String,
    /// Applied to the same value: `allOf`, `anyOf`, `oneOf`, `not`,
    /// `if`/`then`/`else`, dependent schemas, and references.
    in_place: Vec<NodeId>,
    /// `properties`: applied to the member of that name. Sorted by name.
    properties: Vec<(String, NodeId)>,
    /// Applied (at most) to every member: `patternProperties`,
    /// `additionalProperties`, `unevaluatedProperties`.
    each_member: Vec<NodeId>,
    /// `propertyNames`: applied to every member's name.
    names: Vec<NodeId>,
    /// `prefixItems` (an array `items` before 2020-12): by index.
    prefix_items: Vec<NodeId>,
    /// Applied (at most) to every item: `items`, `additionalItems`,
    /// `contains`, `unevaluatedItems`.
    each_item: Vec<NodeId>,
    /// `pattern` and `format`: work in proportion to a string's length.
    string_checks: u64,
    /// `enum` and `const`: comparisons, weighted by their size.
    comparison_units: u64,
    /// `uniqueItems`: work in proportion to an array's length.
    unique_items: bool,
}

/// A schema's subschemas and how they apply, with references resolved.
#[derive(Debug)]
pub struct Graph {
    nodes: Vec<Node>,
}

/// Why a schema cannot be validated cheaply, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// JSON pointer of the subschema at fault ("" for the root).
    pub pointer: String,
    pub reason: String,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at {}: {}",
            super::shown_pointer(&self.pointer),
            self.reason
        )
    }
}

impl std::error::Error for ShapeError {}

/// Validating a value would cost more than its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget;

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("validating the value would cost more than its budget")
    }
}

impl std::error::Error for OverBudget {}

impl Graph {
    /// Builds the graph of `schema` and checks its shape: every reference
    /// resolves within the schema, no reference loops back without
    /// descending into the value, chains of references stay shallow, and
    /// the whole expands to at most [`MAX_EXPANSION`] subschemas.
    pub fn build(schema: &Value) -> Result<Graph, ShapeError> {
        let mut builder = Builder::default();
        builder.resources.push(Resource {
            id: String::new(),
            value: schema,
            pointer: String::new(),
        });
        builder.walk(schema, String::new(), 0);
        builder.resolve_references()?;
        let graph = Graph {
            nodes: builder.nodes,
        };
        graph.check_expansion()?;
        graph.check_in_place_chains()?;
        Ok(graph)
    }

    /// The work units validating `value` may take: one per (subschema,
    /// value) pair the validator may visit, plus string checks and
    /// comparisons by size. An upper bound (every branch of an `anyOf` is
    /// counted); counting stops, and fails, past `budget`.
    pub fn cost(&self, value: &Value, budget: u64) -> Result<u64, OverBudget> {
        let mut units = 0;
        self.visit(ROOT, Instance::Value(value), &mut units, budget)?;
        Ok(units)
    }

    fn visit(
        &self,
        id: NodeId,
        instance: Instance<'_>,
        units: &mut u64,
        budget: u64,
    ) -> Result<(), OverBudget> {
        let node = &self.nodes[id as usize];
        *units += 1 + node.comparison_units;
        let string = match instance {
            Instance::Value(Value::String(text)) => Some(text.as_str()),
            Instance::Name(text) => Some(text),
            Instance::Value(_) => None,
        };
        if let Some(text) = string {
            *units += node.string_checks * (1 + (text.len() / STRING_BYTES_PER_UNIT) as u64);
        }
        match instance {
            Instance::Value(Value::Array(items)) if node.unique_items => {
                *units += items.len() as u64;
            }
            _ => {}
        }
        if *units > budget {
            return Err(OverBudget);
        }
        for &next in &node.in_place {
            self.visit(next, instance, units, budget)?;
        }
        match instance {
            Instance::Value(Value::Object(members)) => {
                for (name, member) in members {
                    let property = node
                        .properties
                        .binary_search_by(|(p, _)| p.as_str().cmp(name));
                    if let Ok(found) = property {
                        let next = node.properties[found].1;
                        self.visit(next, Instance::Value(member), units, budget)?;
                    }
                    for &next in &node.each_member {
                        self.visit(next, Instance::Value(member), units, budget)?;
                    }
                    for &next in &node.names {
                        self.visit(next, Instance::Name(name), units, budget)?;
                    }
                }
            }
            Instance::Value(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    if let Some(&next) = node.prefix_items.get(index) {
                        self.visit(next, Instance::Value(item), units, budget)?;
                    }
                    for &next in &node.each_item {
                        self.visit(next, Instance::Value(item), units, budget)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Edges that keep to the same value must form no cycle (the validator
    /// would never finish) and no chain longer than [`MAX_IN_PLACE_DEPTH`]
    /// (the validator recurses once per link).
    fn check_in_place_chains(&self) -> Result<(), ShapeError> {
        let n = self.nodes.len();
        let mut incoming = vec![0u32; n];
        for node in &self.nodes {
            for &next in &node.in_place {
                incoming[next as usize] += 1;
            }
        }
        // Kahn's algorithm: nodes in topological order, with the longest
        // chain that reaches each.
        let mut depth = vec![1u32; n];
        let mut ready: Vec<usize> = (0..n).filter(|&i| incoming[i] == 0).collect();
        let mut done = 0;
        while let Some(i) = ready.pop() {
            done += 1;
            for &next in &self.nodes[i].in_place {
                let next = next as usize;
                depth[next] = depth[next].max(depth[i] + 1);
                if depth[next] > MAX_IN_PLACE_DEPTH {
                    return Err(self.error(
                        next as NodeId,
                        format!(
                            "references and combinators chain more than {MAX_IN_PLACE_DEPTH} deep without descending into the value"
                        ),
                    ));
                }
                incoming[next] -= 1;
                if incoming[next] == 0 {
                    ready.push(next);
                }
            }
        }
        if done == n {
            return Ok(());
        }
        // What is left lies on a cycle or after one. Walking back along
        // incoming edges from any of it must come round to a node of a cycle.
        let mut from: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, node) in self.nodes.iter().enumerate() {
            for &next in &node.in_place {
                if incoming[next as usize] > 0 && incoming[i] > 0 {
                    from[next as usize].push(i);
                }
            }
        }
        let mut seen = vec![false; n];
        let mut at = (0..n).find(|&i| incoming[i] > 0).expect("a node is left");
        while !seen[at] {
            seen[at] = true;
            at = from[at][0];
        }
        Err(self.error(
            at as NodeId,
            "a reference loops back to this subschema without descending into the value".into(),
        ))
    }

    /// The schema with every reference expanded where it is used (each
    /// recursion counted once) must have at most [`MAX_EXPANSION`]
    /// subschemas. Counted over the strongly connected components, deepest
    /// first, so that the subschema named is where the expansion blows up.
    fn check_expansion(&self) -> Result<(), ShapeError> {
        let edges: Vec<Vec<NodeId>> = self.nodes.iter().map(Node::edges).collect();
        let components = strongly_connected(&edges);
        let mut component_of = vec![0usize; self.nodes.len()];
        for (c, members) in components.iter().enumerate() {
            for &member in members {
                component_of[member as usize] = c;
            }
        }
        // Tarjan's algorithm yields each component after every component
        // it reaches, so their expansions are known when it is counted.
        let mut expansion = vec![0u64; components.len()];
        for (c, members) in components.iter().enumerate() {
            let mut total = members.len() as u64;
            for &member in members {
                for &next in &edges[member as usize] {
                    let other = component_of[next as usize];
                    if other != c {
                        total = total.saturating_add(expansion[other]);
                    }
                }
            }
            if total > MAX_EXPANSION {
                let first = *members.iter().min().expect("components are not empty");
                return Err(self.error(
                    first,
                    format!(
                        "its references expand to more than {MAX_EXPANSION} subschemas (each `$ref` counts again wherever it is used); define shared parts once instead of referring to them from many branches"
                    ),
                ));
            }
            expansion[c] = total;
        }
        Ok(())
    }

    fn error(&self, id: NodeId, reason: String) -> ShapeError {
        ShapeError {
            pointer: self.nodes[id as usize].pointer.clone(),
            reason,
        }
    }
}

impl Node {
    /// Every subschema this one applies, of any kind.
    fn edges(&self) -> Vec<NodeId> {
        let mut edges = self.in_place.clone();
        edges.extend(self.properties.iter().map(|&(_, id)| id));
        for more in [
            &self.each_member,
            &self.names,
            &self.prefix_items,
            &self.each_item,
        ] {
            edges.extend(more);
        }
        edges
    }
}

/// What a subschema is applied to: a value, or a member's name
/// (`propertyNames`), which validates as a string.
#[derive(Clone, Copy)]
enum Instance<'a> {
    Value(&'a Value),
    Name(&'a str),
}

/// A part of the schema with its own `$id`, which references may name.
struct Resource<'v> {
    id: String,
    value: &'v Value,
    pointer: String,
}

/// A reference found while walking, resolved once the whole schema is known.
struct Reference {
    from: NodeId,
    keyword: &'static str,
    target: String,
    resource: usize,
}

#[derive(Default)]
struct Builder<'v> {
    nodes: Vec<Node>,
    /// Each subschema's node, by the address of its value in the schema.
    by_address: HashMap<*const Value, NodeId>,
    resources: Vec<Resource<'v>>,
    /// `$anchor` and `$dynamicAnchor` names and the subschemas that carry them.
    anchors: HashMap<String, Vec<NodeId>>,
    references: Vec<Reference>,
}

impl<'v> Builder<'v> {
    /// Adds the subschema `value` at `pointer` and everything under it.
    /// Recursion is bounded by the nesting of the parsed JSON.
    fn walk(&mut self, value: &'v Value, pointer: String, resource: usize) -> NodeId {
        if let Some(&id) = self.by_address.get(&(value as *const Value)) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.by_address.insert(value as *const Value, id);
        self.nodes.push(Node {
            pointer: pointer.clone(),
            ..Node::default()
        });
        let Value::Object(keywords) = value else {
            return id; // `true`, `false`, or not a schema (which does not compile).
        };
        let mut resource = resource;
        if let Some(Value::String(own)) = keywords.get("$id")
            && id != ROOT
        {
            self.resources.push(Resource {
                id: own.clone(),
                value,
                pointer: pointer.clone(),
            });
            resource = self.resources.len() - 1;
        } else if let Some(Value::String(own)) = keywords.get("$id") {
            self.resources[0].id = own.clone();
        }
        for anchor in ["$anchor", "$dynamicAnchor"] {
            if let Some(Value::String(name)) = keywords.get(anchor) {
                self.anchors.entry(name.clone()).or_default().push(id);
            }
        }
        let mut node = Node {
            pointer: pointer.clone(),
            ..Node::default()
        };
        for (keyword, inner) in keywords {
            let at = format!("{pointer}/{}", escape(keyword));
            match (keyword.as_str(), inner) {
                ("allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                    node.in_place.extend(self.walk_list(list, &at, resource));
                }
                ("not" | "if" | "then" | "else" | "contentSchema", _) => {
                    node.in_place.push(self.walk(inner, at, resource));
                }
                ("dependentSchemas", Value::Object(map)) => {
                    let walked = self.walk_map(map, &at, resource);
                    node.in_place.extend(walked.into_iter().map(|(_, id)| id));
                }
                ("dependencies", Value::Object(map)) => {
                    // Draft 7 and before: array values are required names.
                    for (name, dependent) in map {
                        if !dependent.is_array() {
                            let id =
                                self.walk(dependent, format!("{at}/{}", escape(name)), resource);
                            node.in_place.push(id);
                        }
                    }
                }
                ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(target)) => {
                    self.references.push(Reference {
                        from: id,
                        keyword: match keyword.as_str() {
                            "$ref" => "$ref",
                            "$dynamicRef" => "$dynamicRef",
                            _ => "$recursiveRef",
                        },
                        target: target.clone(),
                        resource,
                    });
                }
                ("properties", Value::Object(map)) => {
                    node.properties.extend(self.walk_map(map, &at, resource));
                    node.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                ("patternProperties", Value::Object(map)) => {
                    let walked = self.walk_map(map, &at, resource);
                    node.each_member
                        .extend(walked.into_iter().map(|(_, id)| id));
                }
                ("additionalProperties" | "unevaluatedProperties", _) => {
                    node.each_member.push(self.walk(inner, at, resource));
                }
                ("propertyNames", _) => node.names.push(self.walk(inner, at, resource)),
                ("prefixItems" | "items", Value::Array(list)) => {
                    node.prefix_items
                        .extend(self.walk_list(list, &at, resource));
                }
                ("items" | "additionalItems" | "contains" | "unevaluatedItems", _) => {
                    node.each_item.push(self.walk(inner, at, resource));
                }
                ("$defs" | "definitions", Value::Object(map)) => {
                    // Not applied by themselves; walked so that references
                    // into them resolve and their shape is checked.
                    self.walk_map(map, &at, resource);
                }
                ("pattern" | "format", Value::String(_)) => node.string_checks += 1,
                ("enum", Value::Array(list)) => {
                    node.comparison_units += list.len() as u64 + compared_units(inner);
                }
                ("const", _) => node.comparison_units += 1 + compared_units(inner),
                ("uniqueItems", Value::Bool(true)) => node.unique_items = true,
                _ => {}
            }
        }
        self.nodes[id as usize] = node;
        id
    }

    fn walk_list(&mut self, list: &'v [Value], at: &str, resource: usize) -> Vec<NodeId> {
        list.iter()
            .enumerate()
            .map(|(i, inner)| self.walk(inner, format!("{at}/{i}"), resource))
            .collect()
    }

    fn walk_map(
        &mut self,
        map: &'v Map<String, Value>,
        at: &str,
        resource: usize,
    ) -> Vec<(String, NodeId)> {
        map.iter()
            .map(|(name, inner)| {
                let id = self.walk(inner, format!("{at}/{}", escape(name)), resource);
                (name.clone(), id)
            })
            .collect()
    }

    /// Links every reference to the subschemas it may name. Targets outside
    /// what was walked (a pointer into `examples`, say) are walked then.
    fn resolve_references(&mut self) -> Result<(), ShapeError> {
        while let Some(reference) = self.references.pop() {
            let targets = self.targets(&reference).map_err(|reason| ShapeError {
                pointer: self.nodes[reference.from as usize].pointer.clone(),
                reason,
            })?;
            self.nodes[reference.from as usize].in_place.extend(targets);
        }
        Ok(())
    }

    fn targets(&mut self, reference: &Reference) -> Result<Vec<NodeId>, String> {
        let Reference {
            keyword, target, ..
        } = reference;
        let unresolved = || {
            format!(
                "`{keyword}` `{target}` does not resolve within the schema (remote references are never fetched)"
            )
        };
        if *keyword == "$recursiveRef" {
            return Ok(vec![self.resource_root(reference.resource)]);
        }
        let (base, fragment) = target.split_once('#').unwrap_or((target, ""));
        let resource = if base.is_empty() {
            reference.resource
        } else {
            self.resources
                .iter()
                .position(|r| !r.id.is_empty() && same_resource(&r.id, base))
                .ok_or_else(unresolved)?
        };
        if fragment.is_empty() {
            return Ok(vec![self.resource_root(resource)]);
        }
        if fragment.starts_with('/') {
            let pointer = percent_decode(fragment);
            let root = &self.resources[resource];
            let (value, at) = (root.value, format!("{}{pointer}", root.pointer));
            let inner = value.pointer(&pointer).ok_or_else(unresolved)?;
            return Ok(vec![self.walk(inner, at, resource)]);
        }
        // An anchor: every subschema that carries the name (a dynamic
        // reference may land on any of them, so the count takes them all).
        match self.anchors.get(fragment) {
            Some(ids) if *keyword == "$dynamicRef" => Ok(ids.clone()),
            Some(ids) => Ok(vec![ids[0]]),
            None => Err(unresolved()),
        }
    }

    fn resource_root(&mut self, resource: usize) -> NodeId {
        let root = &self.resources[resource];
        let (value, pointer) = (root.value, root.pointer.clone());
        self.walk(value, pointer, resource)
    }
}

/// Whether a reference's URI names the resource with `$id` `id`: the same
/// URI, or the same last path segments (a relative reference).
fn same_resource(id: &str, base: &str) -> bool {
    let id = id.trim_end_matches('#');
    id == base || id.ends_with(&format!("/{}", base.trim_start_matches("./")))
}

/// Units for comparing against an `enum` or `const` value of this size.
fn compared_units(value: &Value) -> u64 {
    (value.to_string().len() / COMPARED_BYTES_PER_UNIT) as u64
}

/// A member name as a JSON pointer segment.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Decodes `%XX` escapes in a URI fragment.
fn percent_decode(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Tarjan's strongly connected components, without recursion (a schema
/// may nest deeply): each component comes after every component it reaches.
fn strongly_connected(edges: &[Vec<NodeId>]) -> Vec<Vec<NodeId>> {
    const UNSEEN: u32 = u32::MAX;
    let n = edges.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<NodeId> = Vec::new();
    let mut components = Vec::new();
    let mut next_index = 0u32;
    // The explicit call stack: a node and the next of its edges to follow.
    let mut calls: Vec<(usize, usize)> = Vec::new();
    for start in 0..n {
        if index[start] != UNSEEN {
            continue;
        }
        calls.push((start, 0));
        index[start] = next_index;
        low[start] = next_index;
        next_index += 1;
        stack.push(start as NodeId);
        on_stack[start] = true;
        while let Some(&(v, edge)) = calls.last() {
            if let Some(&w) = edges[v].get(edge) {
                let top = calls.len() - 1;
                calls[top].1 += 1;
                let w = w as usize;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as NodeId);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let member = stack.pop().expect("v is on the stack");
                    on_stack[member as usize] = false;
                    component.push(member);
                    if member as usize == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}
