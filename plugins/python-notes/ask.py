"""Asking the client from Python: thin helpers over the bindings that
componentize-py generates for the contract's `client` interface
(corral:plugin/client, new in contract 0.2.0). notes.py calls them through `Asker`.

WIT maps to Python like this: a record is a dataclass (`InputRequest(key=...,
request=...)`), a variant case is a class named `Variant_Case` with a `value`
field (`Request_ElicitForm(FormElicitation(...))`, `InputResponse_Elicitation`,
`ElicitationAnswer_Accept(value=json_text)`), and a `result`'s error arrives
as the exception `componentize_py_types.Err` whose `value` is the error
variant (`AskError_Undeclared(value="elicitation")`, `AskError_TimedOut()`).
"""

import json

from componentize_py_types import Err
from wit_world.imports import client
from wit_world.imports.client import (
    AskError_Failed,
    AskError_Invalid,
    AskError_TimedOut,
    AskError_Undeclared,
    ElicitationAnswer_Accept,
    FormElicitation,
    InputRequest,
    InputResponse_Elicitation,
    Request_ElicitForm,
)

CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Yes, go ahead", "default": False}},
    "required": ["confirm"],
}


class AskFailed(Exception):
    """The client could not answer: told to the model as a tool error."""


def describe(error) -> str:
    if isinstance(error, AskError_Undeclared):
        return f"the client cannot be asked: it did not declare the `{error.value}` capability"
    if isinstance(error, AskError_Failed):
        return f"the client's answer failed: {error.value}"
    if isinstance(error, AskError_TimedOut):
        return "the client did not answer in time"
    if isinstance(error, AskError_Invalid):
        return f"invalid request to the client: {error.value}"
    return f"the client could not answer: {error!r}"


class Asker:
    """What notes.py needs of the client. Keys name each request (clients
    of 2026-07-28 see them in `inputRequests`); keep them fixed."""

    def can_elicit(self) -> bool:
        return client.capabilities().elicitation_form

    def elicit(self, key: str, message: str, schema: dict) -> dict | None:
        """The accepted fields, or None when the user declined or cancelled."""
        request = InputRequest(key=key, request=Request_ElicitForm(
            FormElicitation(message=message, requested_schema=json.dumps(schema))))
        try:
            [answer] = client.ask([request])
        except Err as err:
            raise AskFailed(describe(err.value)) from None
        if not isinstance(answer, InputResponse_Elicitation):
            raise AskFailed("the client answered a form with another kind of answer")
        if isinstance(answer.value, ElicitationAnswer_Accept):
            return json.loads(answer.value.value)
        return None

    def confirm(self, key: str, message: str) -> bool:
        """True only if the user accepted and ticked yes."""
        fields = self.elicit(key, message, CONFIRM_SCHEMA)
        return bool(fields and fields.get("confirm") is True)
