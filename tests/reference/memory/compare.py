"""Drives the reference server npm @modelcontextprotocol/server-memory and
`corral serve` with the js-memory plugin through the same scripted sessions,
with the official MCP Python SDK, and compares every result and the memory
files they leave.

Usage: python compare.py NODE ORIGINAL_ENTRY CORRAL_BINARY PLUGIN_DIR WORK_DIR

NODE runs ORIGINAL_ENTRY (the package's dist/index.js). PLUGIN_DIR holds the
built js-memory.wasm and its shipped manifest js-memory.toml, which grants
the folder `memory` beside it as /memory and sets MEMORY_FILE_PATH to
/memory/memory.jsonl; the driver creates that folder. WORK_DIR is an empty
folder for everything else: the original's memory files, and the plugin
folders of the later sessions (a copy of the component with a manifest of
their own). Each server has its own file in its own folder.

Sessions (each a fresh server of each kind):

1. "main": from no file at all, every tool on entities, relations and
   observations: duplicates, unknown and absent names, cascading deletes,
   searches by name, type and observation text in other cases, unicode,
   empty lists, arguments the schemas refuse, read_graph after each kind of
   change. Then the two files are compared byte for byte (the promise to a
   user who switches: the same file either way).
2. "switch": the plugin starts on a copy of the file the original wrote in
   session 1, the original on its own; both read, search, change it, and the
   files are compared again.
3. "legacy": MEMORY_FILE_PATH unset, a legacy memory.json in the home folder
   (the original's dist/, the plugin's first grant): both rename it to
   memory.jsonl, as the original's migration does, and go on with it.
4. "relative": MEMORY_FILE_PATH = "nested/graph.jsonl", taken from the home
   folder by both.
5. "corrupt": a file with a line that is not JSON: every call fails, and
   neither server changes the file.
6. "legacy race": the plugin checks for a legacy memory.json on every call
   (each call is a fresh instance), the original once, as it starts; so
   only the plugin can race. Eight times, a folder with a legacy
   memory.json gets 16 read_graph calls at once, some of which find it
   still there and lose the race to rename it (before the plugin took a
   lost race for a done migration, about half the rounds had a call fail);
   each answer must be the original's first answer of session 3 (its
   graph), and memory.json must be gone.

After every session, neither server's folder may hold a temporary file
(*.tmp): both write a temporary file and rename it over the memory file.

For sessions 3 and 4 the original runs from a copy of its dist/index.js in a
folder of WORK_DIR (its home: it resolves a relative path, and puts its
default file, next to its script), with that folder's node_modules linked to
the installed package's.

Compared, for every call: the content (type and text), structuredContent and
isError. For tools/list: the set of tools, and each tool's name, title,
description, inputSchema, outputSchema and annotations.

Every successful result is compared exactly: each of the original's has a
text item (JSON or a sentence), and Corral's host adds structured content as
JSON text only to a result without one (host/mcp/src/shape.rs).

ALLOWED differences, each with its reason:

1. "schema": arguments that break the input schema both servers advertise
   (a missing field, a wrong type). Both refuse them with isError and no
   structuredContent, and neither touches the file; the words differ. The
   original's SDK reports zod's issues ("MCP error -32602: Input validation
   error: ..."); Corral checks the arguments against the advertised schema
   before the plugin runs and answers with its own message ("Invalid
   arguments for tool `create_entities`: ..."), the same for every plugin.

2. "parse": a line of the file that is not JSON. Both fail the call with the
   engine's JSON.parse message, which V8 (Node) and SpiderMonkey (the
   plugin's engine) word differently ("Unexpected token ..." against
   "JSON.parse: unexpected character ..."): both must be isError, without
   structuredContent, and the file must stay as it was.
"""

import asyncio
import os
import shutil
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import schema_refusal_problems, short  # noqa: E402

PLUGIN = "js-memory"
TOOLS = {
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
}


def entity(name, entity_type="person", observations=(), **extra):
    return {"name": name, "entityType": entity_type, "observations": list(observations), **extra}


def relation(source, target, relation_type="knows", **extra):
    return {"from": source, "to": target, "relationType": relation_type, **extra}


READ = ("read_graph", {})
LONG = "A long observation. " * 5000  # 100,000 characters
ODD = 'quote " backslash \\ newline \n tab \t nul \x00 line-separator \u2028 emoji 🧠 RTL مرحبا'

# (label, tool, arguments, expectation): "same" (every field equal),
# "schema" (ALLOWED 1) or "parse" (ALLOWED 2).
MAIN = [
    ("read_graph with no file", *READ, "same"),
    ("search_nodes with no file", "search_nodes", {"query": "anything"}, "same"),
    ("open_nodes with no file", "open_nodes", {"names": ["Nobody"]}, "same"),
    ("create_entities with none writes an empty file", "create_entities", {"entities": []}, "same"),
    ("read_graph of the empty file", *READ, "same"),
    (
        "create_entities",
        "create_entities",
        {
            "entities": [
                entity("Ada Lovelace", "Mathematician", ["Wrote the first program", "Worked with Babbage"]),
                entity("Bob", "person", ["Likes tea"]),
                entity("Café Ünïcödé", "Place", ["Serves CRÈME brûlée"]),
            ]
        },
        "same",
    ),
    (
        "create_entities ignores existing names",
        "create_entities",
        {"entities": [entity("Bob", "robot", ["ignored"]), entity("Dana", "person")]},
        "same",
    ),
    (
        "create_entities adds a repeated new name twice",
        "create_entities",
        {"entities": [entity("Eve", "spy"), entity("Eve", "spy", ["again"])]},
        "same",
    ),
    (
        "create_entities drops fields its schema does not name",
        "create_entities",
        {"entities": [entity("Fay", "person", ["has an id"], id=7, tags=["x"])]},
        "same",
    ),
    (
        "create_entities with unicode names",
        "create_entities",
        {"entities": [entity("Σοφία", "Φιλόσοφος", ["ΣΟΦΊΑ in capitals"]), entity("東京", "都市", ["首都"]), entity("Straße", "street")]},
        "same",
    ),
    ("create_entities with odd characters", "create_entities", {"entities": [entity(ODD, ODD, [ODD])]}, "same"),
    ("read_graph after creating entities", *READ, "same"),
    (
        "create_relations, one to an entity that does not exist",
        "create_relations",
        {"relations": [relation("Ada Lovelace", "Bob"), relation("Bob", "Café Ünïcödé", "visits"), relation("Ada Lovelace", "Ghost", "mentors")]},
        "same",
    ),
    (
        "create_relations ignores duplicates, not a new type",
        "create_relations",
        {"relations": [relation("Ada Lovelace", "Bob"), relation("Ada Lovelace", "Bob", "likes", note="dropped")]},
        "same",
    ),
    (
        "create_relations adds a repeated new one twice",
        "create_relations",
        {"relations": [relation("Dana", "Eve", "watches"), relation("Dana", "Eve", "watches")]},
        "same",
    ),
    ("create_relations with none", "create_relations", {"relations": []}, "same"),
    ("read_graph after creating relations", *READ, "same"),
    (
        "add_observations",
        "add_observations",
        {"observations": [{"entityName": "Bob", "contents": ["Plays chess", "Likes tea"]}]},
        "same",
    ),
    (
        "add_observations repeats within one call",
        "add_observations",
        {"observations": [{"entityName": "Dana", "contents": ["new", "new"]}, {"entityName": "Dana", "contents": ["new", "newer"]}]},
        "same",
    ),
    (
        "add_observations to an unknown entity",
        "add_observations",
        {"observations": [{"entityName": "Nobody", "contents": ["x"]}]},
        "same",
    ),
    (
        "add_observations, known then unknown, saves nothing",
        "add_observations",
        {"observations": [{"entityName": "Bob", "contents": ["lost"]}, {"entityName": "Ghost", "contents": ["x"]}]},
        "same",
    ),
    ("add_observations, a long one", "add_observations", {"observations": [{"entityName": "Fay", "contents": [LONG]}]}, "same"),
    ("add_observations with none", "add_observations", {"observations": []}, "same"),
    ("read_graph after adding observations", *READ, "same"),
    ("search_nodes by a name in other case", "search_nodes", {"query": "ada LOVE"}, "same"),
    ("search_nodes by type in capitals", "search_nodes", {"query": "PERSON"}, "same"),
    ("search_nodes by observation text", "search_nodes", {"query": "TEA"}, "same"),
    ("search_nodes with accents in other case", "search_nodes", {"query": "café ÜNÏCÖDÉ"}, "same"),
    ("search_nodes through crème in capitals", "search_nodes", {"query": "CRÈME"}, "same"),
    ("search_nodes Greek capitals (final sigma)", "search_nodes", {"query": "ΣΟΦΊΑ"}, "same"),
    ("search_nodes STRASSE does not find Straße", "search_nodes", {"query": "STRASSE"}, "same"),
    ("search_nodes Japanese", "search_nodes", {"query": "首都"}, "same"),
    ("search_nodes inside the long observation", "search_nodes", {"query": "observation. a long"}, "same"),
    ("search_nodes with nothing matching", "search_nodes", {"query": "zzz"}, "same"),
    ("search_nodes with an empty query finds all", "search_nodes", {"query": ""}, "same"),
    ("open_nodes, one unknown", "open_nodes", {"names": ["Ada Lovelace", "Nobody"]}, "same"),
    ("open_nodes is case-sensitive", "open_nodes", {"names": ["ada lovelace"]}, "same"),
    ("open_nodes of a relation end that is no entity", "open_nodes", {"names": ["Ghost"]}, "same"),
    ("open_nodes with none", "open_nodes", {"names": []}, "same"),
    ("open_nodes unicode and odd names", "open_nodes", {"names": ["東京", ODD]}, "same"),
    (
        "delete_observations, some absent, an unknown entity",
        "delete_observations",
        {"deletions": [{"entityName": "Bob", "observations": ["Likes tea", "not there"]}, {"entityName": "Ghost", "observations": ["x"]}]},
        "same",
    ),
    ("read_graph after deleting observations", *READ, "same"),
    (
        "delete_relations, one absent",
        "delete_relations",
        {"relations": [relation("Ada Lovelace", "Bob", "likes"), relation("Nobody", "Bob")]},
        "same",
    ),
    ("read_graph after deleting a relation", *READ, "same"),
    ("delete_entities cascades to relations", "delete_entities", {"entityNames": ["Bob", "Nobody"]}, "same"),
    ("read_graph after deleting entities", *READ, "same"),
    ("delete_entities of a repeated name", "delete_entities", {"entityNames": ["Eve"]}, "same"),
    ("delete_entities with none", "delete_entities", {"entityNames": []}, "same"),
    ("delete_relations with none", "delete_relations", {"relations": []}, "same"),
    ("delete_observations with none", "delete_observations", {"deletions": []}, "same"),
    ("read_graph with an argument it does not name", "read_graph", {"verbose": True}, "same"),
    ("create_entities without observations", "create_entities", {"entities": [{"name": "X", "entityType": "t"}]}, "schema"),
    ("create_entities with a numeric name", "create_entities", {"entities": [entity(42)]}, "schema"),
    ("create_relations with a numeric type", "create_relations", {"relations": [relation("A", "B", 1)]}, "schema"),
    ("add_observations without contents", "add_observations", {"observations": [{"entityName": "Dana"}]}, "schema"),
    ("delete_entities with a string for the list", "delete_entities", {"entityNames": "Dana"}, "schema"),
    ("search_nodes without a query", "search_nodes", {}, "schema"),
    ("open_nodes with null names", "open_nodes", {"names": None}, "schema"),
    ("read_graph after the refusals: unchanged", *READ, "same"),
]

SWITCH = [
    ("read_graph of the original's file", *READ, "same"),
    ("search_nodes in it", "search_nodes", {"query": "a"}, "same"),
    ("open_nodes in it", "open_nodes", {"names": ["Dana", "Café Ünïcödé"]}, "same"),
    ("add_observations to it", "add_observations", {"observations": [{"entityName": "Dana", "contents": ["switched"]}]}, "same"),
    ("create_relations in it", "create_relations", {"relations": [relation("Dana", "東京", "moved to")]}, "same"),
    ("delete_observations in it", "delete_observations", {"deletions": [{"entityName": "Fay", "observations": [LONG]}]}, "same"),
    ("read_graph after the changes", *READ, "same"),
]

LEGACY_FILE = (
    '{"type":"entity","name":"Old","entityType":"legacy","observations":["from memory.json"]}\n'
    '{"type":"relation","from":"Old","to":"Old","relationType":"remembers"}'
)
LEGACY = [
    ("read_graph migrates memory.json", *READ, "same"),
    ("create_entities in the migrated file", "create_entities", {"entities": [entity("New", "fresh")]}, "same"),
    ("read_graph after it", *READ, "same"),
]

RELATIVE = [
    ("read_graph with a relative path and no file", *READ, "same"),
    ("create_entities at the relative path", "create_entities", {"entities": [entity("Rel", "ative")]}, "same"),
    ("read_graph at the relative path", *READ, "same"),
]

CORRUPT_FILE = '{"type":"entity","name":"Fine","entityType":"t","observations":[]}\nnot json\n'
CORRUPT = [
    ("read_graph of a corrupt file", *READ, "parse"),
    ("create_entities on a corrupt file", "create_entities", {"entities": [entity("Lost", "t")]}, "parse"),
    ("search_nodes on a corrupt file", "search_nodes", {"query": "Fine"}, "parse"),
]


def dump(result):
    """The compared parts of a CallToolResult."""
    return {
        "content": [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in result.content],
        "structuredContent": result.structured_content,
        "isError": bool(result.is_error),
    }


def tool_entries(tools):
    entries = {}
    for tool in tools.tools:
        entry = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        entries[tool.name] = {key: entry.get(key) for key in ("name", "title", "description", "inputSchema", "outputSchema", "annotations")}
    return entries


async def run(params, calls):
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        entries = tool_entries(await client.list_tools())
        results = []
        for _label, tool, arguments, _expect in calls:
            results.append(dump(await client.call_tool(tool, arguments)))
        return entries, results


def compare(tool, expect, original, corral):
    """The problems with one call's pair of results."""
    problems = []
    if expect == "same":
        if corral != original:
            problems.append(f"results differ:\n  original: {short(original)}\n  corral:   {short(corral)}")
        return problems
    for name, result in (("original", original), ("corral", corral)):
        if not result["isError"] or result["structuredContent"] is not None:
            problems.append(f"{name} should fail without structuredContent: {short(result)}")
    if expect == "schema":
        problems += schema_refusal_problems(original, corral, tool)
    elif expect == "parse":
        if "JSON" not in original["content"][0]["text"]:
            problems.append(f"original's error is not JSON.parse's: {short(original)}")
        if not corral["content"][0]["text"].startswith("JSON.parse: "):
            problems.append(f"corral's error is not JSON.parse's: {short(corral)}")
    return problems


class Report:
    def __init__(self):
        self.failures = 0
        self.calls = 0

    def check(self, ok, text):
        if ok:
            print(f"ok   {text}")
        else:
            self.failures += 1
            print(f"FAIL {text}")

    def same_files(self, what, original, plugin):
        a = original.read_bytes() if original.exists() else None
        b = plugin.read_bytes() if plugin.exists() else None
        if a is None or a != b:
            self.failures += 1
            # Shown from a little before the first byte that differs.
            at = next((i for i, (x, y) in enumerate(zip(a or b"", b or b"")) if x != y), min(len(a or b""), len(b or b"")))
            start = max(0, at - 40)
            print(
                f"FAIL {what}: the files differ at byte {at}\n"
                f"  original {original}: {short(a and a[start:].decode(errors='replace'))}\n"
                f"  plugin   {plugin}: {short(b and b[start:].decode(errors='replace'))}"
            )
        else:
            print(f"ok   {what}: the two files are the same {len(a)} bytes")

    def no_temporaries(self, what, *folders):
        left = sorted(str(path) for folder in folders for path in folder.rglob("*.tmp"))
        self.check(not left, f"{what}: no temporary file left" + (f": {left}" if left else ""))


class Servers:
    """Starts the original and Corral for one session."""

    def __init__(self, node, entry, corral, wasm, work):
        self.node, self.entry, self.corral, self.wasm, self.work = node, entry, corral, wasm, work

    def original_home(self, name):
        """A copy of the original's script in WORK/name/dist, whose imports
        resolve through a link to the installed package's node_modules."""
        root = self.work / name
        (root / "dist").mkdir(parents=True)
        shutil.copy(self.entry, root / "dist" / "index.js")
        installed = Path(self.entry).resolve().parents[3]  # .../node_modules
        (root / "node_modules").symlink_to(installed)
        return root / "dist"

    def original(self, entry, memory_file_path):
        env = {key: value for key, value in os.environ.items() if key != "MEMORY_FILE_PATH"}
        if memory_file_path is not None:
            env["MEMORY_FILE_PATH"] = memory_file_path
        return StdioServerParameters(command=self.node, args=[str(entry)], env=env)

    def plugin_folder(self, name, manifest):
        """WORK/name holding the component and `manifest`; returns it and its
        granted folder memory/."""
        folder = self.work / name
        folder.mkdir()
        shutil.copy(self.wasm, folder / f"{PLUGIN}.wasm")
        (folder / f"{PLUGIN}.toml").write_text(manifest)
        (folder / "memory").mkdir()
        return folder

    def corral_params(self, folder):
        return StdioServerParameters(command=self.corral, args=["serve", str(folder)], env=dict(os.environ))


async def session(report, name, calls, original_params, corral_params, check_tools=False):
    print(f"-- session {name}")
    original_entries, original_results = await run(original_params, calls)
    corral_entries, corral_results = await run(corral_params, calls)
    if check_tools:
        report.check(set(original_entries) == TOOLS, f"the original's tools are the nine: {sorted(original_entries)}")
        report.check(set(corral_entries) == set(original_entries), f"corral lists the same tools: {sorted(corral_entries)}")
        for tool in sorted(TOOLS & set(original_entries)):
            same = original_entries[tool] == corral_entries.get(tool)
            report.check(same, f"tools/list {tool}: name, title, description, inputSchema, outputSchema, annotations")
            if not same:
                print(f"     original: {short(original_entries[tool], 4000)}\n     corral:   {short(corral_entries.get(tool), 4000)}")
    for (label, tool, _arguments, expect), original, ours in zip(calls, original_results, corral_results):
        report.calls += 1
        problems = compare(tool, expect, original, ours)
        report.check(not problems, f"{label} ({expect}, isError={ours['isError']})")
        for problem in problems:
            print(f"     {problem}")
    return original_results


RACE_ROUNDS, RACERS = 8, 16


async def legacy_race(report, servers, manifest, expected):
    """Session 6: RACERS concurrent read_graph calls on a fresh legacy
    memory.json, RACE_ROUNDS times, each answer compared with `expected`."""
    print("-- session legacy race")
    for turn in range(RACE_ROUNDS):
        folder = servers.plugin_folder(f"plugin-legacy-race-{turn}", manifest)
        (folder / "memory" / "memory.json").write_text(LEGACY_FILE)
        async with Client(servers.corral_params(folder), mode="legacy", read_timeout_seconds=120) as client:
            await client.list_tools()  # the plugin is loaded before the calls start
            results = await asyncio.gather(*(client.call_tool(*READ) for _ in range(RACERS)))
        for index, result in enumerate(results):
            report.calls += 1
            problems = compare(READ[0], "same", expected, dump(result))
            report.check(not problems, f"round {turn}, call {index}: read_graph migrates memory.json at once with {RACERS - 1} others")
            for problem in problems:
                print(f"     {problem}")
        memory = folder / "memory"
        report.check(
            not (memory / "memory.json").exists() and (memory / "memory.jsonl").read_text() == LEGACY_FILE,
            f"round {turn}: memory.json was migrated away, its lines kept",
        )
        report.no_temporaries(f"round {turn}", memory)


async def main():
    node, entry, corral, plugin_dir, work = sys.argv[1:6]
    plugin_dir, work = Path(plugin_dir), Path(work)
    shipped_manifest = (plugin_dir / f"{PLUGIN}.toml").read_text()
    servers = Servers(node, entry, corral, plugin_dir / f"{PLUGIN}.wasm", work)
    report = Report()

    # 1: the shipped manifest, from no file.
    (plugin_dir / "memory").mkdir()
    plugin_file = plugin_dir / "memory" / "memory.jsonl"
    original_file = work / "original-main" / "memory.jsonl"
    original_file.parent.mkdir()
    await session(report, "main", MAIN, servers.original(entry, str(original_file)), servers.corral_params(plugin_dir), check_tools=True)
    report.same_files("after the main session", original_file, plugin_file)
    report.no_temporaries("after the main session", original_file.parent, plugin_file.parent)

    # 2: the plugin on the original's file.
    folder = servers.plugin_folder("plugin-switch", shipped_manifest)
    shutil.copy(original_file, folder / "memory" / "memory.jsonl")
    await session(report, "switch", SWITCH, servers.original(entry, str(original_file)), servers.corral_params(folder))
    report.same_files("after the switch session", original_file, folder / "memory" / "memory.jsonl")
    report.no_temporaries("after the switch session", original_file.parent, folder / "memory")

    # 3: no MEMORY_FILE_PATH, a legacy memory.json in each home.
    dirs_only = '[[dirs]]\nhost = "memory"\nguest = "/memory"\nmode = "rw"\n'
    home = servers.original_home("original-legacy")
    folder = servers.plugin_folder("plugin-legacy", dirs_only)
    for place in (home, folder / "memory"):
        (place / "memory.json").write_text(LEGACY_FILE)
    legacy_results = await session(report, "legacy", LEGACY, servers.original(home / "index.js", None), servers.corral_params(folder))
    for name, place in (("original", home), ("plugin", folder / "memory")):
        report.check(not (place / "memory.json").exists(), f"{name}: memory.json was migrated away")
    report.same_files("after the legacy session", home / "memory.jsonl", folder / "memory" / "memory.jsonl")
    report.no_temporaries("after the legacy session", home, folder / "memory")

    # 4: a relative MEMORY_FILE_PATH.
    relative = "nested/graph.jsonl"
    home = servers.original_home("original-relative")
    folder = servers.plugin_folder("plugin-relative", dirs_only + f'\n[env]\nset = {{ MEMORY_FILE_PATH = "{relative}" }}\n')
    for place in (home, folder / "memory"):
        (place / "nested").mkdir()
    await session(report, "relative", RELATIVE, servers.original(home / "index.js", relative), servers.corral_params(folder))
    report.same_files("after the relative session", home / relative, folder / "memory" / relative)
    report.no_temporaries("after the relative session", home, folder / "memory")

    # 5: a corrupt file, left as it was.
    original_file = work / "original-corrupt" / "memory.jsonl"
    original_file.parent.mkdir()
    folder = servers.plugin_folder("plugin-corrupt", shipped_manifest)
    for place in (original_file, folder / "memory" / "memory.jsonl"):
        place.write_text(CORRUPT_FILE)
    await session(report, "corrupt", CORRUPT, servers.original(entry, str(original_file)), servers.corral_params(folder))
    for name, place in (("original", original_file), ("plugin", folder / "memory" / "memory.jsonl")):
        report.check(place.read_text() == CORRUPT_FILE, f"{name}: the corrupt file is unchanged")
    report.no_temporaries("after the corrupt session", original_file.parent, folder / "memory")

    # 6: concurrent first calls, each migrating memory.json.
    await legacy_race(report, servers, dirs_only, legacy_results[0])

    print(f"{report.calls} calls compared, {report.failures} failures")
    if report.failures:
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
