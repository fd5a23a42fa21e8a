"""A tool with no dependencies (a plain object: its public methods are its activities)."""


class Echo:
    name = "Echo"

    def echo(self, params):
        """Answers its params."""
        return {"type": "TextArtifact", "value": str(params)}


def init_tool():
    return Echo()
