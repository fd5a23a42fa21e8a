"""Shared fixtures: the griptape project (projects/griptape) deployed once per session as two structures (an agent,
and a knowledge base reader) and a tool.

Both deployments pip-install griptape (the longest part of the suite), so they are started when the session
begins and build while the generated-client tests run; the tests that need them wait for them.
"""
from __future__ import annotations

import pytest
from griptape.drivers.file_manager.griptape_cloud import GriptapeCloudFileManagerDriver
from griptape_cloud_client import models as m

from support import API_KEY, MODEL, call, client_for, wait_until, zip_project

DEPLOY_TIMEOUT = 900


@pytest.fixture(scope="session", autouse=True)
def griptape_project():
    """Uploads the project with griptape's file manager driver to the default bucket, then creates the structure
    and the tool (which starts their deployments). The structure gets GT_CLOUD_API_KEY as a secret reference, the
    way users give deployed code a key; griptape's drivers in it read it from the environment."""
    client = client_for()
    organization = call("organizations.list_organizations", client).organizations[0]
    files = GriptapeCloudFileManagerDriver(bucket_id=organization.default_bucket_id, workdir="/code")
    files.save_file("griptape.zip", zip_project("griptape"))
    code = {"data_lake": {"bucket_id": organization.default_bucket_id, "asset_path": "code/griptape.zip"}}
    secret = call("secrets.create_secret", client, body=m.CreateSecretRequestContent(name="GT_CLOUD_API_KEY", value=API_KEY))
    structure = call("structures.create_structure", client, body=m.CreateStructureRequestContent.from_dict({
        "name": "griptape agent", "code": code, "structure_config_file": "structure/structure_config.yaml",
        "env_vars": [{"name": "GT_CLOUD_API_KEY", "value": secret.secret_id, "source": "secret_ref"}, {"name": "TARMAC_MODEL", "value": MODEL}],
    }))
    tool = call("tools.create_tool", client, body=m.CreateToolRequestContent.from_dict({
        "name": "griptape words", "code": code, "tool_config_file": "tool/tool_config.yaml"}))
    # No GT_CLOUD_API_KEY here: the vector store driver uses the run's own credential.
    knowledge = call("structures.create_structure", client, body=m.CreateStructureRequestContent.from_dict({
        "name": "griptape knowledge", "code": code, "structure_config_file": "knowledge/structure_config.yaml",
        "env_vars": [{"name": "TARMAC_MODEL", "value": MODEL}]}))
    return {"organization": organization, "structure": structure, "tool": tool, "knowledge": knowledge}


def _deployed(latest_deployment_id: str):
    client = client_for()
    deployment = wait_until(f"deployment {latest_deployment_id}", lambda: (
        d := call("deployments.get_deployment", client, latest_deployment_id)).status.value not in ("QUEUED", "DEPLOYING") and d,
        timeout=DEPLOY_TIMEOUT, interval=1)
    assert deployment.status.value == "SUCCEEDED", deployment.status_detail
    return deployment


@pytest.fixture(scope="session")
def agent_structure(griptape_project):
    _deployed(griptape_project["structure"].latest_deployment_id)
    return griptape_project["structure"]


@pytest.fixture(scope="session")
def knowledge_structure(griptape_project):
    _deployed(griptape_project["knowledge"].latest_deployment_id)
    return griptape_project["knowledge"]


@pytest.fixture(scope="session")
def words_tool(griptape_project):
    _deployed(griptape_project["tool"].latest_deployment_id)
    return griptape_project["tool"]


@pytest.fixture(scope="session")
def node_words_tool(griptape_project):
    """The Node.js tool of projects/node-tool, uploaded to the default bucket and deployed."""
    client = client_for()
    bucket_id = griptape_project["organization"].default_bucket_id
    GriptapeCloudFileManagerDriver(bucket_id=bucket_id, workdir="/code").save_file("node-tool.zip", zip_project("node-tool"))
    tool = call("tools.create_tool", client, body=m.CreateToolRequestContent.from_dict({
        "name": "node words", "code": {"data_lake": {"bucket_id": bucket_id, "asset_path": "code/node-tool.zip"}}}))
    _deployed(tool.latest_deployment_id)
    return tool
