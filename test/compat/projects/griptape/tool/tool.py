"""A griptape BaseTool deployed as a tool: its @activity methods are what GriptapeCloudToolTool offers a model."""
from attrs import define
from schema import Literal, Schema

from griptape.artifacts import TextArtifact
from griptape.tools import BaseTool
from griptape.utils.decorators import activity


@define
class WordTool(BaseTool):
    @activity(config={
        "description": "Reverses the order of the words of a text.",
        "schema": Schema({Literal("text", description="The text whose words to reverse"): str}),
    })
    def reverse_words(self, params: dict) -> TextArtifact:
        return TextArtifact(" ".join(reversed(params["values"]["text"].split())))


def init_tool():
    return WordTool()
