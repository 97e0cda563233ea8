"""Runs tools as tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28,
SEP-2663) through the official MCP Python SDK over Streamable HTTP.

Usage: python python_tasks.py URL PART

URL serves the conformance fixture with a short `task-after`. The SDK (`mcp` 2.3.0)
has no client for 2026-07-28 tasks: its task types (`mcp_types.GetTaskRequest`,
`CreateTaskResult`, ...) are the 2025-11-25 ones, and nothing in `mcp.client`
polls `tasks/get` or sends `tasks/update` or `tasks/cancel`. What it offers is the
extension surface a tasks client is built on: `ClientExtension` with a `ResultClaim`
on `resultType: "task"` (mcp/client/extension.py), whose resolver `Client.call_tool`
runs with the session, and `ClientSession.send_request` for the extension's methods
(with `Request.name_param` for their `Mcp-Name` header). PART is one of:

- "bare": the extension only advertised (`mcp.client.advertise`): `call_tool` of
  `slow_compute` gets a task it cannot parse, which is checked.
- "slow": a `ResultClaim` resolver, written here, polls the task of `slow_compute`
  (3 s) with `tasks/get` until it completes; its result is parsed as the SDK parses
  a 2026-07-28 `tools/call` result (`mcp_types.methods.parse_server_result`).
- "confirm": the same for `confirm_delete`, whose task asks for consent: the
  resolver answers its `inputRequests` with `tasks/update`.

Exits non-zero on the first mismatch.
"""

import asyncio
import sys
import time
from typing import Any, Literal, TypeVar

from mcp import Client, types
from mcp.client import advertise
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp_types import methods
from pydantic import ValidationError

from example_calls import fail

TASKS = "io.modelcontextprotocol/tasks"
ResultT = TypeVar("ResultT", bound=types.Result)
VERSION = "2026-07-28"


class CreateTaskResult(types.Result):
    """The task a `tools/call` is answered with (`resultType: "task"`)."""

    result_type: Literal["task"]
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """A `tasks/get` result: the task, with its result, error or input requests."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(types.RequestParams):
    task_id: str


class UpdateTaskParams(TaskParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class UpdateTask(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param = "taskId"


class Tasks(ClientExtension):
    """The tasks extension as the SDK's extension API lets a client add it: a claim
    on `resultType: "task"` whose resolver follows the task to its end."""

    identifier = TASKS

    def __init__(self, elicit: ElicitationFnT) -> None:
        self.elicit = elicit
        self.created: list[CreateTaskResult] = []
        self.statuses: list[str] = []
        self.sent: dict[str, int] = {}
        self.result: types.CallToolResult | None = None

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.follow)]

    async def send(self, ctx: ClaimContext, request: types.Request[Any, Any], answer: type[ResultT]) -> ResultT:
        self.sent[request.method] = self.sent.get(request.method, 0) + 1
        return await ctx.session.send_request(request, answer)

    async def follow(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        self.created.append(created)
        self.statuses.append(created.status)
        task_id = created.task_id
        interval = created.poll_interval_ms
        deadline = time.monotonic() + 60
        answered: set[str] = set()
        while True:
            await asyncio.sleep((interval or 1000) / 1000)
            task = await self.send(ctx, GetTask(params=TaskParams(task_id=task_id)), DetailedTask)
            if task.task_id != task_id:
                fail(f"tasks/get of {task_id} answered task {task.task_id}")
            if self.statuses[-1] != task.status:
                self.statuses.append(task.status)
            interval = task.poll_interval_ms or interval
            if task.status == "completed":
                # The result of the call the task ran, as the SDK takes one of tools/call.
                result = methods.parse_server_result("tools/call", VERSION, task.result or {})
                if not isinstance(result, types.CallToolResult):
                    fail(f"the completed task holds {result!r}, not a CallToolResult")
                return result
            if task.status in ("failed", "cancelled"):
                fail(f"task {task_id} ended {task.status}: {task.error} {task.status_message}")
            if task.status == "input_required":
                responses = {}
                for key, request in (task.input_requests or {}).items():
                    if key in answered:
                        continue
                    # Asked as the client's own elicitation callback is asked.
                    ask = types.ElicitRequest.model_validate(request)
                    context = ClientRequestContext(session=ctx.session, request_id=key)
                    answer = await self.elicit(context, ask.params)
                    if isinstance(answer, types.ErrorData):
                        fail(f"the callback answered {answer}")
                    responses[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                    answered.add(key)
                if responses:
                    update = UpdateTaskParams(task_id=task_id, input_responses=responses)
                    await self.send(ctx, UpdateTask(params=update), types.Result)
            if time.monotonic() > deadline:
                fail(f"task {task_id} still {task.status} after 60 s")


def text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def bare(url: str) -> None:
    async with Client(url, mode=VERSION, extensions=[advertise(TASKS)]) as client:
        try:
            result = await client.call_tool("slow_compute", {"seconds": 3, "label": "bare"})
        except ValidationError as error:
            if "'task'" not in str(error):
                fail(f"call_tool failed otherwise than on the task: {error}")
            print(f"python client alone ({client.protocol_version}): call_tool cannot take the task")
            return
        fail(f"call_tool returned {result!r}; expected it to fail on the task")


async def through_task(
    url: str, tool: str, arguments: dict[str, Any], answers: list[dict[str, Any]]
) -> tuple[Tasks, types.CallToolResult, list[str]]:
    """Calls `tool` as a task, a user answering its questions with `answers` in
    order through the client's elicitation callback; returns the extension, the
    result and what was asked."""
    pending = list(answers)
    asked: list[str] = []

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not pending:
            fail(f"asked once more than expected: {params.message!r}")
        asked.append(params.message)
        answer = pending.pop(0)
        return types.ElicitResult(action=answer["action"], content=answer.get("content"))

    tasks = Tasks(on_elicit)
    started = time.monotonic()
    async with Client(
        url, mode=VERSION, read_timeout_seconds=60, elicitation_callback=on_elicit, extensions=[tasks]
    ) as client:
        if client.protocol_version != VERSION:
            fail(f"pinned {VERSION} but speaking {client.protocol_version}")
        result = await client.call_tool(tool, arguments)
    if len(tasks.created) != 1:
        fail(f"{tool} made {len(tasks.created)} tasks; expected it to become one")
    if tasks.statuses[0] != "working" or tasks.statuses[-1] != "completed":
        fail(f"{tool}'s task went {tasks.statuses}")
    if pending:
        fail(f"{len(pending)} answer(s) never asked for; asked: {asked}")
    print(
        f"python client ({VERSION}): {tool} task {tasks.created[0].task_id} went "
        f"{' -> '.join(tasks.statuses)} in {time.monotonic() - started:.1f} s, asked {asked}, "
        f"sent {tasks.sent} and said {text(result)!r}"
    )
    return tasks, result, asked


async def main(url: str, part: str) -> None:
    if part == "bare":
        await bare(url)
    elif part == "slow":
        started = time.monotonic()
        tasks, result, _ = await through_task(url, "slow_compute", {"seconds": 3, "label": "python"}, [])
        if text(result) != "computed python after 3 s":
            fail(f"the task's result: {result!r}")
        if time.monotonic() - started < 3:
            fail("done before the tool could have been")
        if tasks.sent.get("tasks/get", 0) < 1:
            fail(f"sent {tasks.sent}")
    elif part == "confirm":
        answers = [{"action": "accept", "content": {"confirm": True}}]
        tasks, result, asked = await through_task(url, "confirm_delete", {"filename": "notes.txt"}, answers)
        if text(result) != "Deleted notes.txt.":
            fail(f"the task's result: {result!r}")
        if asked != ["Delete notes.txt?"] or "input_required" not in tasks.statuses:
            fail(f"asked {asked}, statuses {tasks.statuses}")
        if tasks.sent.get("tasks/update") != 1:
            fail(f"sent {tasks.sent}")
    else:
        fail(f"unknown part {part}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
