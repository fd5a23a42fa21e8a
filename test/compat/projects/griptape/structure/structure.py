"""A griptape Agent deployed as a structure, talking to the platform only through griptape's own Griptape Cloud
drivers, unmodified: events and spans (GriptapeCloudStructure with observe=True), the model
(GriptapeCloudPromptDriver), a ruleset by alias, conversation memory in a thread by alias, and a file in the
organization's default bucket (GT_CLOUD_BUCKET_ID, set by the platform).

usage: structure.py <prompt> <thread alias> <ruleset alias>
"""
import os
import sys

from griptape.drivers.file_manager.griptape_cloud import GriptapeCloudFileManagerDriver
from griptape.drivers.memory.conversation.griptape_cloud import GriptapeCloudConversationMemoryDriver
from griptape.drivers.prompt.griptape_cloud import GriptapeCloudPromptDriver
from griptape.drivers.ruleset.griptape_cloud import GriptapeCloudRulesetDriver
from griptape.memory.structure import ConversationMemory
from griptape.rules import Ruleset
from griptape.structures import Agent
from griptape.utils import GriptapeCloudStructure

prompt, thread_alias, ruleset_alias = sys.argv[1:4]

with GriptapeCloudStructure(observe=True) as structure:
    agent = Agent(
        prompt_driver=GriptapeCloudPromptDriver(model=os.environ["TARMAC_MODEL"]),
        conversation_memory=ConversationMemory(conversation_memory_driver=GriptapeCloudConversationMemoryDriver(alias=thread_alias)),
        rulesets=[Ruleset(name=ruleset_alias, ruleset_driver=GriptapeCloudRulesetDriver())],
    )
    answer = agent.run(prompt).output.value

    files = GriptapeCloudFileManagerDriver(workdir="/answers")
    name = f"{structure.structure_run_id}.txt"
    files.save_file(name, answer)
    print("loaded back:", files.load_file(name).value == answer.encode())
    print("listed:", files.list_files("").value)
    structure.output = answer
