"""What the `{{name}}` tool does, apart from the plugin contract (app.py):
plain Python that test_tool.py tests with the machine's python3."""


class ToolFailure(Exception):
    """A problem with the caller's input. app.py returns it as a tool
    execution error: the model sees the message and can correct the call."""


def greet(name: str) -> str:
    name = name.strip()
    if not name:
        raise ToolFailure("`name` must not be blank")
    return f"Hello, {name}!"
