"""griptape's GriptapeCloudVectorStoreDriver, unmodified, inside a deployed structure: it queries a knowledge base
with the run's own credential (GT_CLOUD_API_KEY and GT_CLOUD_BASE_URL, set by the platform) and prints what it
read back, as JSON: each entry's id, score, namespace, and the text of the artifact griptape makes of it.

usage: structure.py <knowledge base id> <query>
"""
import json
import sys

from griptape.drivers.vector.griptape_cloud import GriptapeCloudVectorStoreDriver

knowledge_base_id, query = sys.argv[1:3]
driver = GriptapeCloudVectorStoreDriver(knowledge_base_id=knowledge_base_id)
entries = driver.query(query, count=2, filter={"asset_name": "docs/a.txt"})
print(json.dumps([
    {"id": e.id, "score": e.score, "namespace": e.namespace, "text": e.to_artifact().value} for e in entries
]))
