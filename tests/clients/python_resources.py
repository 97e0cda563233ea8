"""Lists, reads, subscribes to and completes the resources and prompts of a
plugin through the official MCP Python SDK's high-level `Client`.

Usage: python python_resources.py MODE SERVER PART

MODE is a `Client(mode=...)` value: "legacy" (`initialize`; `resources/subscribe`
and a `notifications/resources/updated` on the connection) or "2026-07-28"
(stateless; `subscriptions/listen` with `resourceSubscriptions`). SERVER is a
Streamable HTTP URL, or `stdio:BINARY:DIR` to start `BINARY serve DIR`. PART
"fixture" exercises the fixture tests/plugins/conformance-resources, and
"handbook" the example plugins/handbook (checked against its markdown files);
DIR must serve that plugin, and nothing else with resources or prompts. Exits
non-zero on the first mismatch.
"""

import asyncio
import base64
import json
import os
import sys
import warnings

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from example_calls import fail

WAIT_SECONDS = 30
WATCHED = "test://watched-resource"
TEMPLATE = "test://template/{id}/data"


def connect_to(server: str) -> StdioServerParameters | str:
    if server.startswith("stdio:"):
        _, binary, folder = server.split(":", 2)
        return StdioServerParameters(command=binary, args=["serve", folder], env=dict(os.environ))
    return server


def check(condition: bool, what: str, got) -> None:
    if not condition:
        fail(f"{what}: got {got!r}")
    print(f"ok {what}")


async def resources(client: Client, mode: str) -> None:
    listed = (await client.list_resources()).resources
    uris = [resource.uri for resource in listed]
    check(uris == ["test://static-text", "test://static-binary", WATCHED], "resources/list", uris)
    check(listed[0].mime_type == "text/plain" and listed[0].name == "static-text", "a resource's fields", listed[0])

    templates = (await client.list_resource_templates()).resource_templates
    check([t.uri_template for t in templates] == [TEMPLATE], "resources/templates/list", templates)

    text = (await client.read_resource("test://static-text")).contents
    check(
        len(text) == 1
        and isinstance(text[0], types.TextResourceContents)
        and text[0].text == "This is the content of the static text resource."
        and text[0].mime_type == "text/plain",
        "resources/read of a text resource",
        text,
    )

    blob = (await client.read_resource("test://static-binary")).contents
    check(
        len(blob) == 1
        and isinstance(blob[0], types.BlobResourceContents)
        and base64.b64decode(blob[0].blob)[1:4] == b"PNG"
        and blob[0].mime_type == "image/png",
        "resources/read of a blob",
        blob,
    )

    data = (await client.read_resource("test://template/123/data")).contents
    check(
        len(data) == 1
        and data[0].uri == "test://template/123/data"
        and json.loads(data[0].text) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"},
        "resources/read through a template",
        data,
    )

    # Resource not found: -32002 through 2025-11-25, -32602 from 2026-07-28 on
    # (SEP-2164), with the URI in `data` either way.
    not_found = -32002 if mode == "legacy" else -32602
    try:
        await client.read_resource("test://nowhere")
        fail("resources/read of an unknown URI succeeded")
    except MCPError as err:
        check(
            err.code == not_found and (err.data or {}).get("uri") == "test://nowhere",
            "resources/read of an unknown URI is resource-not-found",
            err.error,
        )


async def subscribe_legacy(client: Client, updated: anyio.Event) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated from 2026-07-28 on; this is the legacy era
        await client.subscribe_resource(WATCHED)
    called = await client.call_tool("test_update_watched_resource", {})
    check(not called.is_error, "test_update_watched_resource", called)
    with anyio.fail_after(WAIT_SECONDS):
        await updated.wait()
    print("ok notifications/resources/updated")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.unsubscribe_resource(WATCHED)
    print("ok resources/unsubscribe")


async def subscribe_modern(client: Client) -> None:
    async with client.listen(resource_subscriptions=[WATCHED]) as subscription:
        honored = subscription.honored.resource_subscriptions
        check(list(honored or []) == [WATCHED], "subscriptions/listen honors the resource", honored)
        called = await client.call_tool("test_update_watched_resource", {})
        check(not called.is_error, "test_update_watched_resource", called)
        with anyio.fail_after(WAIT_SECONDS):
            event = await subscription.__anext__()
        check(event == ResourceUpdated(uri=WATCHED), "a listen stream's resource update", event)


def texts(result: types.GetPromptResult) -> list[str]:
    return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]


async def prompts(client: Client) -> None:
    listed = (await client.list_prompts()).prompts
    names = [prompt.name for prompt in listed]
    check(
        names
        == [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
        ],
        "prompts/list",
        names,
    )
    with_arguments = listed[1]
    check(
        [(a.name, a.required) for a in with_arguments.arguments or []] == [("arg1", True), ("arg2", True)],
        "a prompt's arguments",
        with_arguments,
    )

    simple = await client.get_prompt("test_simple_prompt")
    check(texts(simple) == ["This is a simple prompt for testing."], "prompts/get", simple)

    filled = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
    check(texts(filled) == ["Prompt with arguments: arg1='hello', arg2='world'"], "prompts/get with arguments", filled)

    embedded = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://example"})
    first = embedded.messages[0].content
    check(
        isinstance(first, types.EmbeddedResource)
        and first.resource.uri == "test://example"
        and first.resource.text == "Embedded resource content for testing.",
        "prompts/get with an embedded resource",
        embedded,
    )

    image = await client.get_prompt("test_prompt_with_image")
    first = image.messages[0].content
    check(
        isinstance(first, types.ImageContent) and base64.b64decode(first.data)[1:4] == b"PNG",
        "prompts/get with an image",
        image,
    )

    try:
        await client.get_prompt("test_prompt_with_arguments", {"arg1": "only one"})
        fail("prompts/get without a required argument succeeded")
    except MCPError as err:
        check(err.code == -32602, "prompts/get without a required argument is invalid params", err.error)

    asked = await client.get_prompt("test_input_required_result_prompt")
    check(texts(asked) == ["Prompt with the context the user gave: a tidy room"], "a prompt that asks the user", asked)


async def completion(client: Client) -> None:
    argument = await client.complete(
        types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "par"}
    )
    check(argument.completion.values == ["paris", "park", "party"], "completion of a prompt argument", argument)

    variable = await client.complete(types.ResourceTemplateReference(uri=TEMPLATE), {"name": "id", "value": "12"})
    check(variable.completion.values == ["123", "124", "125"], "completion of a template variable", variable)


HANDBOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "handbook", "src", "sections")


def section(name: str) -> str:
    with open(os.path.join(HANDBOOK, f"{name}.md"), encoding="utf-8") as file:
        return file.read()


async def handbook(client: Client) -> None:
    listed = (await client.list_resources()).resources
    uris = [resource.uri for resource in listed]
    names = ["intro", "install", "plugins", "security"]
    check(uris == [f"handbook://{name}" for name in names], "the handbook's resources", uris)
    check(all(r.mime_type == "text/markdown" for r in listed), "markdown resources", listed)
    for name in names:
        contents = (await client.read_resource(f"handbook://{name}")).contents
        check(
            len(contents) == 1 and contents[0].text == section(name) and contents[0].mime_type == "text/markdown",
            f"resources/read of handbook://{name}",
            contents,
        )
    templates = (await client.list_resource_templates()).resource_templates
    check([t.uri_template for t in templates] == ["handbook://{section}"], "the handbook's template", templates)
    completed = await client.complete(
        types.ResourceTemplateReference(uri="handbook://{section}"), {"name": "section", "value": "in"}
    )
    check(completed.completion.values == ["intro", "install"], "section names complete", completed)

    prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
    check(prompts == ["explain_section"], "the handbook's prompt", prompts)
    explained = await client.get_prompt("explain_section", {"section": "plugins", "audience": "developer"})
    embedded = explained.messages[-1].content
    check(
        "developer" in texts(explained)[0]
        and isinstance(embedded, types.EmbeddedResource)
        and embedded.resource.uri == "handbook://plugins"
        and embedded.resource.text == section("plugins"),
        "explain_section embeds the section",
        explained,
    )
    completed = await client.complete(
        types.PromptReference(name="explain_section"), {"name": "section", "value": "s"}
    )
    check(completed.completion.values == ["security"], "the prompt's section completes", completed)


async def main(mode: str, server: str, part: str) -> None:
    if part not in ("fixture", "handbook"):
        fail(f"unknown part {part!r}: fixture or handbook")
    updated = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == WATCHED:
            updated.set()

    async def on_elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        if params.message != "What context should the prompt use?":
            fail(f"asked something else: {params}")
        return types.ElicitResult(action="accept", content={"context": "a tidy room"})

    async with Client(
        connect_to(server),
        mode=mode,
        read_timeout_seconds=60,
        message_handler=on_message,
        elicitation_callback=on_elicit,
    ) as client:
        print(f"{mode}: negotiated {client.protocol_version}")
        # A pinned 2026-07-28 client asks the server nothing before its first
        # request: send `server/discover` for what the server declares.
        if mode == "legacy":
            capabilities = client.server_capabilities
        else:
            discovered = await client.session.send_discover(client.protocol_version)
            capabilities = types.DiscoverResult.model_validate(discovered).capabilities
        check(
            capabilities.resources is not None and capabilities.prompts is not None and capabilities.completions is not None,
            "the resources, prompts and completions capabilities",
            capabilities,
        )
        if part == "handbook":
            await handbook(client)
        else:
            await resources(client, mode)
            if mode == "legacy":
                await subscribe_legacy(client, updated)
            else:
                await subscribe_modern(client)
            await prompts(client)
            await completion(client)
    print(f"python client ({mode}): the {part}'s resources, prompts and completion passed")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
